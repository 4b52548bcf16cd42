import Foundation
import TestSupport
import Testing

/// `Scripts/check_imports.py`, which CI runs before the tests: the checkout keeps to the table in
/// docs/architecture.md, and a module importing what its row does not allow fails the check.
@Suite struct ImportCheckTests {
    static func check(_ repository: String) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", Repository.root.appendingPathComponent("Scripts/check_imports.py").path, "--no-manifest",
            repository,
        ]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    @Test func theCheckoutImportsOnlyWhatTheArchitectureAllows() throws {
        let result = try Self.check(Repository.root.path)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("imports: 0 forbidden import(s)"))
    }

    @Test func aFaceThatImportsAWrapperFailsTheCheckWithTheLineAndWhatIsAllowed() throws {
        let copy = NSTemporaryDirectory() + "hostscope-imports-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let files = FileManager.default
        try files.createDirectory(atPath: copy + "/docs", withIntermediateDirectories: true)
        try files.copyItem(
            atPath: Repository.root.appendingPathComponent("docs/architecture.md").path,
            toPath: copy + "/docs/architecture.md")
        try files.createDirectory(atPath: copy + "/Sources/hostscope", withIntermediateDirectories: true)
        try files.createDirectory(atPath: copy + "/Sources/Storage", withIntermediateDirectories: true)
        try "import ArgumentParser\nimport HostscopeCore\n@testable import SSHTransport\n".write(
            toFile: copy + "/Sources/hostscope/Command.swift", atomically: true, encoding: .utf8)
        try "public import GRDB\nimport HostStats\n".write(
            toFile: copy + "/Sources/Storage/Store.swift", atomically: true, encoding: .utf8)
        let result = try Self.check(copy)
        #expect(result.status == 1)
        #expect(result.output.contains("Sources/hostscope/Command.swift:3: hostscope imports SSHTransport"))
        #expect(result.output.contains("Sources/Storage/Store.swift:2: Storage imports HostStats"))
        #expect(result.output.contains("imports: 2 forbidden import(s)"))
    }
}
