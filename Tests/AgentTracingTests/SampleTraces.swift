import AgentTracing
import Foundation
public import OrderedJSON
import TestSupport
import Tracing

/// Builds tracers with a manual clock and sequential ids, and records traces shaped like the ones
/// hostscope produces (SSH connect and exec, HTTP, a chat turn with a tool call).
enum SampleTraces {
    static let start: UInt64 = 1_795_000_000_000_000_000  // 2026-11-18T…Z
    static let resource = TraceResource.hostscope(version: "0.1.0", hostName: "test-host")
    static let scope = InstrumentationScope(version: "0.1.0")

    static func tracer(
        capacity: Int = 1_000, limits: SpanLimits = SpanLimits(), secrets: [String] = [],
        step: UInt64 = 1_000_000, sinks: [any FinishedSpanSink] = []
    ) -> (RingBufferTracer, ManualTracingClock) {
        let clock = ManualTracingClock(start: start, step: step)
        let tracer = RingBufferTracer(
            capacity: capacity, resource: resource, limits: limits, clock: clock,
            idGenerator: SequentialTraceIDGenerator(), scrubber: SecretScrubber(secrets: secrets), sinks: sinks)
        return (tracer, clock)
    }

    /// One watch tick against a host and one chat turn: every attribute type, events, links, an error.
    static func record(into tracer: RingBufferTracer) {
        tracer.withSpan("snapshot web1", ofKind: .internal) { snapshot in
            snapshot.setAttribute("host.name", "web1")
            snapshot.setAttribute("hostscope.collector", "proc")
            tracer.withSpan("ssh connect", ofKind: .client) { connect in
                connect.setAttribute("server.address", "web1.example.net")
                connect.setAttribute("server.port", 22)
                connect.setAttribute("ssh.auth.method", "publickey")
                connect.addEvent("host key verified", attributes: [Attribute("ssh.host_key.type", "ssh-ed25519")])
            }
            tracer.withSpan("exec cat", ofKind: .client) { exec in
                exec.setAttribute("process.command_args", ["cat", "/proc/stat", "/proc/meminfo"])
                exec.setAttribute("process.exit.code", 1)
                exec.setAttribute("hostscope.bytes.out", .int(12_345))
                exec.setAttribute("hostscope.duration.ratio", 0.25)
                exec.setAttribute("hostscope.retried", true)
                exec.setAttribute("hostscope.samples", .doubleArray([0.5, 1.0, 2.25]))
                exec.setAttribute("hostscope.flags", .boolArray([true, false]))
                exec.setAttribute("hostscope.sizes", .intArray([1, -2, Int64.max]))
                exec.addEvent("stderr", attributes: [Attribute("line", "cat: /proc/x: No such file or directory\n")])
                exec.setStatus(.error, message: "exit status 1")
            }
        }
        tracer.withSpan("chat", ofKind: .client) { turn in
            turn.setAttribute("gen_ai.operation.name", "chat")
            turn.setAttribute("gen_ai.provider.name", "openai")
            turn.setAttribute("gen_ai.request.model", "gpt-test")
            turn.setAttribute("gen_ai.usage.input_tokens", 812)
            turn.setAttribute("gen_ai.usage.output_tokens", 64)
            let tool = tracer.startSpan("execute_tool grep.search", context: turn.context, ofKind: .internal)
            tool.setAttribute("gen_ai.tool.name", "grep.search")
            tool.setAttribute("gen_ai.tool.call.id", "tu_01")
            tool.setAttribute("openinference.span.kind", "TOOL")
            tool.setAttribute("note", "quotes \" backslash \\ tab \t newline \n line separator \u{2028} é 🚀")
            tool.end()
            turn.addLink(to: tool.spanContext, attributes: [Attribute("gen_ai.tool.call.id", "tu_01")])
            turn.setStatus(.ok)
        }
    }

    /// Runs `validate_otlp_ndjson.py` on a file; `nil` when the shared folder is absent.
    static func validate(_ file: URL) throws -> (status: Int32, output: String)? {
        guard let shared = Repository.shared else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", shared.appendingPathComponent("tools/validate_otlp_ndjson.py").path, "-q", file.path,
        ]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    static func temporaryFile(_ name: String, _ bytes: [UInt8]) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "hostscope-\(UUID().uuidString)-\(name)")
        try Data(bytes).write(to: url)
        return url
    }

    /// The text split into lines without their newlines.
    static func lines(_ bytes: [UInt8]) -> [String] {
        bytes.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
    }
}

// Expected OTLP and flat objects read best as literals; only these tests need that.
extension JSONValue: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(elements))
    }
}
