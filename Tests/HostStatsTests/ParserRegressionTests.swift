import Foundation
import HostStats
import OrderedJSON
import TestSupport
import Testing

/// One line of `Fixtures/regressions/manifest.tsv`: an input that once stopped `hostscope parse`
/// with a runtime trap (found by `Scripts/fuzz/mutate_parse.py`, added by
/// `Scripts/fuzz/add_regressions.py`).
struct RegressionCase: Sendable, CustomTestStringConvertible {
    var file: String
    var tool: String
    var before: String

    var testDescription: String { "\(tool) \(file)" }

    static func all() -> [RegressionCase] {
        FixtureText.manifestRows("regressions/manifest.tsv").compactMap { columns in
            guard columns.count >= 2 else { return nil }
            return RegressionCase(file: columns[0], tool: columns[1], before: columns.count > 2 ? columns[2] : "")
        }
    }

    var url: URL { Repository.fixtures.appendingPathComponent("regressions").appendingPathComponent(file) }
    var goldenURL: URL { url.appendingPathExtension("json") }
}

@Suite struct ParserRegressionTests {
    @Test func everyInputThatTrappedIsKept() {
        let cases = RegressionCase.all()
        #expect(cases.count >= 81)
        for regression in cases {
            #expect(FileManager.default.fileExists(atPath: regression.url.path), "\(regression.file) is missing")
            #expect(
                ToolParser.named(regression.tool) != nil, "\(regression.file) names unknown tool \(regression.tool)")
        }
    }

    /// Parses to its golden: the figures read, `null` and a warning for each one out of range, or
    /// the one-sentence error for output whose shape the mutation broke. Never a trap.
    @Test(arguments: RegressionCase.all())
    func anInputThatOnceTrappedParsesToItsGolden(_ regression: RegressionCase) throws {
        let parser = try #require(ToolParser.named(regression.tool))
        let text = String(decoding: try Data(contentsOf: regression.url), as: UTF8.self)
        let rendered: String
        do {
            rendered = try parser.parse(text).jsonValue.prettyJSONString + "\n"
        } catch {
            let value: JSONValue = .object(["error": .object(["kind": "parse", "message": .string(error.description)])])
            rendered = value.prettyJSONString + "\n"
        }
        if ProcessInfo.processInfo.environment["HOSTSCOPE_RECORD_GOLDENS"] == "1" {
            try rendered.write(to: regression.goldenURL, atomically: true, encoding: .utf8)
            return
        }
        let golden = try String(contentsOf: regression.goldenURL, encoding: .utf8)
        #expect(rendered == golden, "\(regression.file) (\(regression.before)) no longer parses to its golden")
    }

    /// Long rows once took time cubic (`df --output` with text columns) or exponential (`ps` with
    /// several text columns) in their words; the fuzzer's input that hung for more than 10 s
    /// is `fuzz-082-df.input`. Rows far longer must now be split in well under the time limit.
    @Test func longRowsAreSplitInTimeLinearInTheirWords() throws {
        let words = Array(repeating: "12334460        0 12334460 devtmp", count: 750).joined(separator: "       ")
        let df = """
            Mounted on                                1K-blocks     Used    Avail Filesystem              Type
            /dev                                       \(words)
            /srv                                              4        0        4 archive               tmpfs

            """
        let ps = """
            PID COMMAND COMMAND COMMAND COMMAND COMMAND COMMAND %CPU ARGS
            1 \(Array(repeating: "word", count: 80).joined(separator: " "))

            """
        let clock = ContinuousClock()
        let elapsed = try clock.measure {
            _ = try? #require(ToolParser.named("df")).parse(df)
            _ = try? #require(ToolParser.named("ps")).parse(ps)
        }
        #expect(elapsed < .seconds(5), "took \(elapsed)")
    }

    /// Each kind of figure behind the traps now becomes `null` with a warning, the row kept.
    @Test func theTrapsTheFuzzerFoundAreWarningsAndNulls() throws {
        let outcomes = try RegressionCase.all().map { regression -> (RegressionCase, SnapshotPart?) in
            let parser = try #require(ToolParser.named(regression.tool))
            let text = String(decoding: try Data(contentsOf: regression.url), as: UTF8.self)
            return (regression, try? parser.parse(text))
        }
        let warned = outcomes.filter { _, part in
            part?.warnings.contains { $0.contains("is out of range: left out (null)") } == true
        }
        // free -h, df -h and top's memory line each had inputs that trapped and now read with nulls.
        for tool in ["free", "df", "top", "ps"] {
            #expect(warned.contains { $0.0.tool == tool }, "no \(tool) regression reads with an out-of-range warning")
        }
        for (regression, part) in warned {
            let json = try #require(part).jsonValue.jsonString
            #expect(json.contains("null"), "\(regression.file): a warning but no null")
        }
    }
}
