import Foundation

/// The golden text of `Fixtures/NAME` to compare `text` with; with `HOSTSCOPE_RECORD_GOLDENS=1` in the environment,
/// `text` is written there first (goldens are rewritten on purpose only, and reviewed as a diff).
public func golden(_ name: String, recording text: String) throws -> String {
    let url = Repository.fixtures.appendingPathComponent(name)
    if ProcessInfo.processInfo.environment["HOSTSCOPE_RECORD_GOLDENS"] == "1" {
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: url, atomically: true, encoding: .utf8)
    }
    return try String(contentsOf: url, encoding: .utf8)
}

/// The golden text of `Fixtures/NAME`, read only (for a second test that checks the same text another way).
public func goldenText(_ name: String) throws -> String {
    try String(contentsOf: Repository.fixtures.appendingPathComponent(name), encoding: .utf8)
}
