import Foundation
import HostStats
import OrderedJSON
import TestSupport
import Testing

/// One line of `Fixtures/manifest.tsv`.
struct FixtureCase: Sendable, CustomTestStringConvertible {
    var file: String
    var tool: String
    var expectsError: Bool

    var testDescription: String { "\(tool) \(file)" }

    /// Every fixture the manifest lists; adding a line adds a test case.
    static func all() -> [FixtureCase] {
        FixtureText.manifestRows("manifest.tsv").compactMap { columns in
            guard columns.count >= 2 else { return nil }
            return FixtureCase(
                file: columns[0], tool: columns[1], expectsError: columns.count > 2 && columns[2] == "error")
        }
    }

    var url: URL { Repository.fixtures.appendingPathComponent(file) }
    var goldenURL: URL { Repository.fixtures.appendingPathComponent(file + ".json") }

    /// The fixture's text, decoded as UTF-8 with invalid bytes replaced, as the CLI reads a file.
    func text() throws -> String {
        String(decoding: try Data(contentsOf: url), as: UTF8.self)
    }

    /// What `hostscope parse TOOL FILE` prints for this fixture, or the error it reports.
    func rendered() throws -> (json: String, failed: Bool) {
        let parser = try #require(ToolParser.named(tool), "no parser named \(tool)")
        do {
            return ((try parser.parse(text())).jsonValue.prettyJSONString + "\n", false)
        } catch let error as ParseError {
            let value: JSONValue = .object(["error": .object(["kind": "parse", "message": .string(error.description)])])
            return (value.prettyJSONString + "\n", true)
        }
    }
}

@Suite struct FixtureGoldenTests {
    @Test func theManifestListsFixturesThatExist() throws {
        let cases = FixtureCase.all()
        #expect(cases.count > 10)
        for fixture in cases {
            #expect(FileManager.default.fileExists(atPath: fixture.url.path), "\(fixture.file) is listed but missing")
            #expect(ToolParser.named(fixture.tool) != nil, "\(fixture.file) names unknown tool \(fixture.tool)")
        }
    }

    @Test(arguments: FixtureCase.all())
    func eachFixtureParsesToItsGolden(_ fixture: FixtureCase) throws {
        let (json, failed) = try fixture.rendered()
        #expect(
            failed == fixture.expectsError,
            "\(fixture.file): expected \(fixture.expectsError ? "an error" : "figures"), got \(json)")
        if ProcessInfo.processInfo.environment["HOSTSCOPE_RECORD_GOLDENS"] == "1" {
            try json.write(to: fixture.goldenURL, atomically: true, encoding: .utf8)
            return
        }
        let golden = try String(contentsOf: fixture.goldenURL, encoding: .utf8)
        let advice = "rerun with HOSTSCOPE_RECORD_GOLDENS=1 if the change is intended"
        #expect(json == golden, "\(fixture.file) no longer parses to its golden; \(advice)")
    }

    @Test func everyGoldenBelongsToAListedFixture() throws {
        let listed = Set(FixtureCase.all().map { $0.file + ".json" })
        let enumerator = try #require(FileManager.default.enumerator(atPath: Repository.fixtures.path))
        // locales/ has its own captures and goldens (LocaleCaptureTests), listed by folder.
        for case let path as String in enumerator where path.hasSuffix(".txt.json") && !path.hasPrefix("locales/") {
            #expect(listed.contains(path), "\(path) has no manifest line")
        }
    }
}
