import Foundation
import OrderedJSON
import TestSupport
import Testing

@testable import Chat

@Suite("Provider stream decoders")
struct StreamDecoderTests {
    private func fixture(_ folder: String, _ name: String, model: String = "m") throws -> [UInt8] {
        let url = Repository.fixtures.appendingPathComponent("llm/\(folder)/\(name).sse")
        let text = try String(contentsOf: url, encoding: .utf8)
            .replacingOccurrences(of: "{{model}}", with: model)
            .replacingOccurrences(of: "{{session_id}}", with: "sess_test")
            .replacingOccurrences(of: "{{stage}}", with: "0")
        return Array(text.utf8)
    }

    private func decode(_ kind: ProviderKind, _ chunks: [[UInt8]], pricing: ModelPricing? = nil) -> [ChatEvent] {
        let provider = ChatProvider(ProviderConfiguration(kind: kind, baseURL: "http://localhost", pricing: pricing))
        var decoder = provider.makeDecoder(model: "m")
        var parser = SSEParser()
        var events: [ChatEvent] = []
        for chunk in chunks {
            parser.parse(chunk) { decoder.decode($0, into: &events) }
        }
        parser.finish()
        decoder.finish(into: &events)
        return events
    }

    @Test("OpenAI text, usage and finish reason")
    func openAIText() throws {
        let events = decode(.openAI, [try fixture("openai", "text")])
        #expect(events.text == "The disk on web1 is 93 % full — mostly /var/log (café-logs 🚀).")
        #expect(events.usages == [ChatUsage(inputTokens: 31, outputTokens: 19)])
        #expect(events.last == .done(finishReason: .stop, sessionID: nil))
        #expect(events.errors.isEmpty)
    }

    @Test("The response's id and model are read from the first frame that names them, for each provider")
    func responseIdentity() throws {
        for (kind, folder) in [(ProviderKind.openAI, "openai"), (.anthropic, "anthropic")] {
            let provider = ChatProvider(ProviderConfiguration(kind: kind, baseURL: "http://localhost"))
            var decoder = provider.makeDecoder(model: "asked-for")
            var parser = SSEParser()
            var events: [ChatEvent] = []
            #expect(decoder.responseID == nil)
            parser.parse(try fixture(folder, "text", model: "answered-by-2026-01")) {
                decoder.decode($0, into: &events)
            }
            #expect(decoder.responseModel == "answered-by-2026-01", "\(kind)")
            let id = try #require(decoder.responseID, "\(kind)")
            #expect(id.hasPrefix(kind == .openAI ? "chatcmpl-" : "msg_"))
        }
    }

    @Test("OpenAI tool call arguments split over chunks are joined into one call")
    func openAIToolCall() throws {
        let events = decode(.openAI, [try fixture("openai", "tool_call_1")])
        #expect(
            events.toolCalls == [
                ToolCall(id: "call_DdmNxbW1Ye2bS3xCWo3x4Ilc", name: "disk_usage", input: .object(["path": "/var"]))
            ])
        #expect(events.finishReason == .toolCalls)
    }

    @Test("OpenAI parallel tool calls interleaved by index come out whole and in index order")
    func openAIParallel() throws {
        let events = decode(.openAI, [try fixture("openai", "parallel_tools_1")])
        #expect(events.toolCalls.map(\.id) == ["call_aaa111", "call_bbb222"])
        #expect(
            events.toolCalls.map(\.input) == [
                .object(["path": "/var"]), .object(["path": "/var/log/syslog", "lines": 20]),
            ])
    }

    @Test("Usage is priced when the provider reports no cost and prices are configured")
    func pricing() throws {
        let events = decode(
            .openAI, [try fixture("openai", "text")], pricing: ModelPricing(inputPerMillion: 1, outputPerMillion: 10))
        #expect(events.usages.first?.costUSD == (31.0 + 190.0) / 1_000_000)
    }

    @Test("OpenRouter comments are skipped, CRLF is read, and its reported cost is used")
    func openRouter() throws {
        let events = decode(
            .openRouter, [try fixture("openrouter", "text")],
            pricing: ModelPricing(inputPerMillion: 100, outputPerMillion: 100))
        #expect(events.text == "Memory is fine: 3.1 GiB of 8 GiB used.")
        #expect(events.usages == [ChatUsage(inputTokens: 44, outputTokens: 14, costUSD: 0.0000651)])
        #expect(events.finishReason == .stop)
    }

    @Test("Anthropic text blocks, ping and usage from message_start and message_delta")
    func anthropicText() throws {
        let events = decode(.anthropic, [try fixture("anthropic", "text")])
        #expect(events.text == "The disk on web1 is 93 % full — mostly /var/log (café-logs 🚀).")
        #expect(events.usages == [ChatUsage(inputTokens: 25, outputTokens: 19)])
        #expect(events.last == .done(finishReason: .stop, sessionID: nil))
    }

    @Test("Anthropic tool_use blocks assembled from input_json_delta pieces, after the text block")
    func anthropicTools() throws {
        let events = decode(.anthropic, [try fixture("anthropic", "parallel_tools_1")])
        #expect(events.text == "I'll check both.")
        #expect(events.toolCalls.map(\.id) == ["toolu_par_aaa", "toolu_par_bbb"])
        #expect(
            events.toolCalls.map(\.input) == [
                .object(["path": "/var"]), .object(["path": "/var/log/syslog", "lines": 20]),
            ])
        #expect(events.finishReason == .toolCalls)
    }

    @Test("An Anthropic error event ends the stream with its kind mapped")
    func anthropicError() throws {
        let events = decode(.anthropic, [try fixture("anthropic", "midstream_error")])
        #expect(events.text == "Checking ")
        #expect(events.errors.map(\.kind) == [.server])
        #expect(events.errors.first?.message.contains("overloaded_error") == true)
        #expect(events.finishReason == .error)
    }

    @Test("Gateway frames become text, tool calls, tool results with duration and exit code, usage and a session")
    func gateway() throws {
        let events = decode(.gateway, [try fixture("gateway", "tools")])
        #expect(events.text == "Let me look. The log shows the disk filled at 19:20.")
        #expect(events.toolCalls.map(\.name) == ["grep.search", "fs.read"])
        #expect(
            events.toolResults == [
                ToolResult(
                    id: "tu_01HZX4", name: "grep.search", isError: false, durationMs: 212, exitCode: 0,
                    output: "Nov 21 19:20:01 web1 kernel: No space left on device"),
                ToolResult(
                    id: "tu_01HZX5", name: "fs.read", isError: true, durationMs: 3, exitCode: 1,
                    output: "permission denied: /etc/shadow"),
            ])
        #expect(events.usages == [ChatUsage(inputTokens: 830, outputTokens: 61, costUSD: 0.00412)])
        #expect(events.last == .done(finishReason: .stop, sessionID: "sess_test"))
    }

    @Test("Malformed frames are skipped and counted, and the stream goes on to the end")
    func malformed() throws {
        for (kind, folder) in [(ProviderKind.openAI, "openai"), (.anthropic, "anthropic")] {
            let events = decode(kind, [try fixture(folder, "malformed")])
            #expect(events.text == "Load low: 0.12.", "\(folder)")
            #expect(events.errors.allSatisfy { $0.kind == .malformedFrame })
            #expect(events.errors.count == (kind == .openAI ? 2 : 1))
            #expect(events.finishReason == .stop)
        }
    }

    @Test("A stream that ends before its end marker is truncated, keeping the text and dropping unfinished calls")
    func truncated() throws {
        let openAI = decode(.openAI, [try fixture("openai", "no_done")])
        #expect(openAI.text == "The disk on web1 is 93 % full — mostly /var/log (café-logs 🚀).")
        #expect(openAI.errors.map(\.kind) == [.truncated])
        #expect(openAI.errors.first?.message.contains("[DONE]") == true)
        #expect(openAI.finishReason == .error)
        let anthropic = decode(.anthropic, [try fixture("anthropic", "no_done")])
        #expect(anthropic.errors.map(\.kind) == [.truncated])
        #expect(anthropic.errors.first?.message.contains("message_stop") == true)

        let call = try fixture("openai", "tool_call_1")
        let cut = Array(call[..<(call.count / 2)])
        let events = decode(.openAI, [cut])
        #expect(events.toolCalls.isEmpty)
        #expect(events.errors.map(\.kind) == [.truncated])
    }

    @Test("Argument text that is not JSON is kept as a string for the validator to refuse")
    func unparsableArguments() {
        let frames = [
            #"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","#
                + #""function":{"name":"t","arguments":"{\"pa"}}]}}]}"#,
            #"data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#, "data: [DONE]", "",
        ].joined(separator: "\n\n")
        let events = decode(.openAI, [Array(frames.utf8)])
        #expect(events.toolCalls == [ToolCall(id: "c1", name: "t", input: .string(#"{"pa"#))])
    }

    @Test("Every provider's recorded streams decode the same when split in two at every byte position")
    func splitAtEveryPosition() throws {
        let cases: [(ProviderKind, String, [String])] = [
            (.openAI, "openai", ["text", "tool_call_1", "parallel_tools_1", "malformed", "no_done"]),
            (.anthropic, "anthropic", ["text", "tool_call_1", "parallel_tools_1", "malformed", "midstream_error"]),
            (.openRouter, "openrouter", ["text"]),
            (.gateway, "gateway", ["text", "tools", "midstream_error"]),
        ]
        for (kind, folder, names) in cases {
            for name in names {
                let bytes = try fixture(folder, name)
                let whole = decode(kind, [bytes])
                #expect(whole.doneCount == 1, "\(folder)/\(name)")
                for cut in stride(from: 0, through: bytes.count, by: 1) {
                    if decode(kind, [Array(bytes[..<cut]), Array(bytes[cut...])]) != whole {
                        Issue.record("\(folder)/\(name) decodes differently when cut at byte \(cut)")
                        break
                    }
                }
            }
        }
    }
}
