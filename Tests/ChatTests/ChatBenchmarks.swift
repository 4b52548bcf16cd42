import CurlHTTP
import Foundation
import OrderedJSON
import TestSupport
import Testing

@testable import Chat

/// The chat benchmark of Scripts/bench/chat: time to first token through the HTTP client, the SSE parser and
/// a provider decoder, next to the same client reading raw bytes and to `curl -N`; and the rate at which a
/// 10,000-chunk stream is consumed, in memory and over loopback HTTP. Off unless `HOSTSCOPE_BENCH=1`; run it
/// in release mode through Scripts/bench/chat/run.sh.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["HOSTSCOPE_BENCH"] == "1"))
struct ChatBenchmarks {
    private let iterations = Int(ProcessInfo.processInfo.environment["HOSTSCOPE_BENCH_ITERATIONS"] ?? "") ?? 200
    private let firstToken = Array(#""content":"The disk "#.utf8)

    private func ms(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    private func stats(_ values: [Double]) -> (median: Double, p90: Double) {
        let sorted = values.sorted()
        return (sorted[sorted.count / 2], sorted[min(sorted.count - 1, sorted.count * 9 / 10)])
    }

    private func format(_ value: Double, _ digits: Int = 3) -> String {
        String(format: "%.\(digits)f", value)
    }

    /// Runs curl and returns what its `--write-out` printed.
    private func curl(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    private func curlArguments(_ mock: MockLLM, model: String, headers: [String] = [], writeOut: String) -> [String] {
        [
            "-sN", "-o", "/dev/null", "-w", writeOut, "-H", "Authorization: Bearer \(MockLLM.apiKey)", "-H",
            "Content-Type: application/json",
        ] + headers.flatMap { ["-H", $0] } + [
            "-d", #"{"model":"\#(model)","stream":true,"messages":[{"role":"user","content":"x"}]}"#,
            mock.baseURL(.openAI) + "/chat/completions",
        ]
    }

    /// The 10,000 frames of the mock's `bench` scenario, built the same way, one chunk per frame.
    private func benchFrames(count: Int, contentBytes: Int) -> [[UInt8]] {
        let content = String(String(repeating: "abcdefghij", count: contentBytes / 10 + 1).prefix(contentBytes))
        let frame =
            #"data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1741570900,"model":"m","#
            + #""choices":[{"index":0,"delta":{"content":"\#(content)"},"logprobs":null,"finish_reason":null}]}"#
            + "\n\n"
        let tail =
            #"data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"#
            + #""finish_reason":"stop"}]}"# + "\n\ndata: [DONE]\n\n"
        return Array(repeating: Array(frame.utf8), count: count) + [Array(tail.utf8)]
    }

    @Test func chatStreaming() async throws {
        try await MockLLM.run { mock in
            var rows: [String] = []
            let provider = mock.provider(.openAI)
            let request = ChatRequest(model: "mock-text", messages: [.user("x")])

            // Warm up the client, the server and the page cache.
            for _ in 0..<20 {
                for await _ in provider.stream(request, using: mock.client) {}
            }

            // Time to first token.
            var parsed: [Double] = []
            var raw: [Double] = []
            var curled: [Double] = []
            for _ in 0..<iterations {
                var start = ContinuousClock.now
                for await event in provider.stream(request, using: mock.client) {
                    if case .text = event {
                        parsed.append(ms(ContinuousClock.now - start))
                        break
                    }
                }

                let httpRequest = try provider.httpRequest(for: request)
                start = ContinuousClock.now
                let response = try await mock.client.stream(httpRequest)
                var seen: [UInt8] = []
                for try await chunk in response.body {
                    seen += chunk
                    if seen.firstRange(of: firstToken) != nil {
                        raw.append(ms(ContinuousClock.now - start))
                        break
                    }
                }

                // curl's own clock: from the start of the transfer to its first body byte, which the mock sends
                // together with the first token.
                let firstByte = try curl(curlArguments(mock, model: "mock-text", writeOut: "%{time_starttransfer}"))
                curled.append((Double(firstByte) ?? .nan) * 1000)
            }
            let (parsedMedian, parsedP90) = stats(parsed)
            let (rawMedian, rawP90) = stats(raw)
            let (curlMedian, curlP90) = stats(curled)
            rows.append(
                "| time to first token: ChatProvider (HTTP + SSE + decoder) | \(format(parsedMedian)) ms | \(format(parsedP90)) ms |"
            )
            rows.append(
                "| time to first token bytes: HTTPClient raw body | \(format(rawMedian)) ms | \(format(rawP90)) ms |")
            rows.append(
                "| time to first body byte: curl -N (its own clock, no process start) | \(format(curlMedian)) ms | \(format(curlP90)) ms |"
            )
            rows.append(
                "| parsing added to the first token (ChatProvider − raw, medians) | \(format(parsedMedian - rawMedian)) ms | |"
            )

            // The first frames parsed and decoded in memory: the cost the parser adds, without the network.
            let text = try String(
                contentsOf: Repository.fixtures.appendingPathComponent("llm/openai/text.sse"), encoding: .utf8)
            let firstFrames = Array(text.utf8.prefix(700))
            var inMemory: [Double] = []
            for _ in 0..<max(iterations, 1000) {
                let start = ContinuousClock.now
                var parser = SSEParser()
                var decoder = provider.makeDecoder(model: "m")
                var events: [ChatEvent] = []
                parser.parse(firstFrames) { decoder.decode($0, into: &events) }
                precondition(events.contains { if case .text = $0 { true } else { false } })
                inMemory.append(ms(ContinuousClock.now - start) * 1000)
            }
            let (memoryMedian, memoryP90) = stats(inMemory)
            rows.append(
                "| first token parsed + decoded in memory | \(format(memoryMedian, 1)) µs | \(format(memoryP90, 1)) µs |"
            )

            // Throughput: 10,000 chunks of about 1.1 KB, and of about 250 bytes (token-sized deltas).
            for contentBytes in [1000, 20] {
                let frames = benchFrames(count: 10_000, contentBytes: contentBytes)
                let bytes = Double(frames.reduce(0) { $0 + $1.count })
                var best = Double.infinity
                for _ in 0..<5 {
                    let start = ContinuousClock.now
                    var parser = SSEParser()
                    var decoder = provider.makeDecoder(model: "m")
                    var events: [ChatEvent] = []
                    var characters = 0
                    for frame in frames {
                        parser.parse(frame) { decoder.decode($0, into: &events) }
                        for event in events {
                            if case .text(let delta) = event {
                                characters += delta.utf8.count
                            }
                        }
                        events.removeAll(keepingCapacity: true)
                    }
                    precondition(characters == 10_000 * contentBytes && decoder.isComplete)
                    best = min(best, ms(ContinuousClock.now - start))
                }
                rows.append(
                    "| 10,000 chunks of \(Int(bytes) / 10_000) B, in memory (SSE + decoder) | \(format(bytes / best / 1000, 1)) MB/s | \(format(best, 1)) ms |"
                )

                let headers: HTTPHeaders = ["X-Mock-Frames": "10000", "X-Mock-Content-Bytes": "\(contentBytes)"]
                let overHTTP = mock.provider(.openAI, headers: headers)
                var bestHTTP = Double.infinity
                for _ in 0..<5 {
                    let start = ContinuousClock.now
                    var characters = 0
                    for await event in overHTTP.stream(
                        ChatRequest(model: "mock-bench", messages: [.user("x")]), using: mock.client)
                    {
                        if case .text(let delta) = event {
                            characters += delta.utf8.count
                        }
                    }
                    precondition(characters == 10_000 * contentBytes)
                    bestHTTP = min(bestHTTP, ms(ContinuousClock.now - start))
                }
                rows.append(
                    "| 10,000 chunks of \(Int(bytes) / 10_000) B over loopback HTTP (ChatProvider) | \(format(bytes / bestHTTP / 1000, 1)) MB/s | \(format(bestHTTP, 1)) ms |"
                )

                var bestCurl = Double.infinity
                for _ in 0..<5 {
                    let total = try curl(
                        curlArguments(
                            mock, model: "mock-bench",
                            headers: ["X-Mock-Frames: 10000", "X-Mock-Content-Bytes: \(contentBytes)"],
                            writeOut: "%{time_total}"))
                    bestCurl = min(bestCurl, (Double(total) ?? .nan) * 1000)
                }
                rows.append(
                    "| 10,000 chunks of \(Int(bytes) / 10_000) B over loopback HTTP (curl -N > /dev/null) | \(format(bytes / bestCurl / 1000, 1)) MB/s | \(format(bestCurl, 1)) ms |"
                )
            }

            let table =
                "| measure | median / rate | p90 / time |\n|---|---|---|\n" + rows.joined(separator: "\n") + "\n"
            print(table)
            if let path = ProcessInfo.processInfo.environment["HOSTSCOPE_BENCH_OUT"] {
                try table.write(toFile: path, atomically: true, encoding: .utf8)
            }
        }
    }
}
