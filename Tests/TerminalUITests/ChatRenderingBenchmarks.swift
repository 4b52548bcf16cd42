import Foundation
import HostscopeCore
import TerminalUI
import Testing
import ValueFormats

/// What the terminal renderer adds to a streamed answer: the cost of rendering the first token with a fresh
/// renderer, and the rate at which it renders 10,000 deltas of Markdown. Off unless `HOSTSCOPE_BENCH=1`; run it
/// with Scripts/bench/chat/run.sh, which appends these rows to the chat table.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["HOSTSCOPE_BENCH"] == "1"))
struct ChatRenderingBenchmarks {
    private static let paragraph = """
        ## Findings\nThe disk is **full**: `/var/log` holds 38 GB of rotated logs.\n- compress them with `gzip`\n\
        - or remove the oldest\n```sh\ndu -sh /var/log/* | sort -h\n```\n
        """

    @Test func rendering() throws {
        let iterations = Int(ProcessInfo.processInfo.environment["HOSTSCOPE_BENCH_ITERATIONS"] ?? "") ?? 200
        var firstToken: [Double] = []
        var sink = 0
        for _ in 0..<max(iterations, 50) {
            let start = ContinuousClock.now
            var renderer = MarkdownStreamRenderer(styled: true)
            sink &+= renderer.feed("The disk ").text.utf8.count
            firstToken.append(Self.microseconds(ContinuousClock.now - start))
        }
        firstToken.sort()

        var rows = [
            "| first token rendered for the terminal (fresh renderer) | \(Self.format(firstToken[firstToken.count / 2], 2)) µs | \(Self.format(firstToken[firstToken.count * 9 / 10], 2)) µs |"
        ]
        for size in [1000, 200] {
            var deltas: [String] = []
            var text = ""
            while text.utf8.count < size * 10_000 { text += Self.paragraph }
            var rest = Substring(text)
            for _ in 0..<10_000 {
                deltas.append(String(rest.prefix(size)))
                rest = rest.dropFirst(size)
            }
            let bytes = Double(deltas.reduce(0) { $0 + $1.utf8.count })
            var best = Double.infinity
            for _ in 0..<5 {
                var renderer = MarkdownStreamRenderer(styled: true)
                let start = ContinuousClock.now
                for delta in deltas { sink &+= renderer.feed(delta).text.utf8.count }
                sink &+= renderer.finish().text.utf8.count
                best = min(best, Self.microseconds(ContinuousClock.now - start) / 1000)
            }
            rows.append(
                "| 10,000 deltas of \(Int(bytes) / 10_000) B of Markdown rendered for the terminal | \(Self.format(bytes / best / 1000, 1)) MB/s | \(Self.format(best, 1)) ms |"
            )
        }
        #expect(sink > 0)
        let table = rows.joined(separator: "\n") + "\n"
        print(table)
        if let path = ProcessInfo.processInfo.environment["HOSTSCOPE_BENCH_OUT"] {
            let existing = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            try (existing + table).write(toFile: path, atomically: true, encoding: .utf8)
        }
    }

    private static func microseconds(_ duration: Duration) -> Double {
        duration.inSeconds * 1e6
    }

    private static func format(_ value: Double, _ digits: Int) -> String {
        String(format: "%.\(digits)f", value)
    }
}
