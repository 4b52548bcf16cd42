import AgentTracing
import Foundation
import HostscopeCore
import Logging
import MCP
import OrderedJSON
import TestSupport
import Testing
import Tracing

@testable import HostscopeMCP

/// The SERVER span of a request covers the server's whole time on it: from the moment the transport handed the
/// request over (before it was parsed) to the moment the answer was handed back to the transport, so that the
/// spans measure what the MCP layer costs (Scripts/bench/mcp).
@Suite(.serialized) struct MCPRequestSpanTests {
    /// One session over an in-memory transport: each request is handed over when the previous one was answered,
    /// and the instants of each hand-over and each answer are noted on the tracer's clock.
    actor ScriptedTransport: Transport {
        nonisolated let logger = Logger(label: "hostscope.test", factory: { _ in SwiftLogNoOpLogHandler() })
        private let requests: [String]
        private var next = 0
        private let stream: AsyncThrowingStream<Data, Swift.Error>
        private let continuation: AsyncThrowingStream<Data, Swift.Error>.Continuation
        /// By request id: when it was handed over, and when its answer came back.
        private(set) var handedOver: [Int: UInt64] = [:]
        private(set) var answered: [Int: UInt64] = [:]
        private(set) var answers: [String] = []

        init(_ requests: [String]) {
            self.requests = requests
            (stream, continuation) = AsyncThrowingStream<Data, Swift.Error>.makeStream()
        }

        func connect() async throws { handOverNext() }

        func disconnect() async { continuation.finish() }

        func send(_ data: Data) async throws {
            let now = TraceClock.now()
            let text = String(decoding: data, as: UTF8.self)
            answers.append(text)
            guard let id = Self.id(text) else { return }
            answered[id] = now
            handOverNext()
        }

        func receive() -> AsyncThrowingStream<Data, Swift.Error> { stream }

        /// Hands over the next request (and the notifications before it), or ends the session after the last.
        private func handOverNext() {
            while next < requests.count {
                let request = requests[next]
                next += 1
                let id = Self.id(request)
                if let id { handedOver[id] = TraceClock.now() }
                continuation.yield(Data(request.utf8))
                if id != nil { return }
            }
            continuation.finish()
        }

        static func id(_ text: String) -> Int? {
            (try? JSONParser.parse(text))?["id"]?.intValue
        }
    }

    static let initialize =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\","
        + "\"capabilities\":{},\"clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}}"

    @Test func aDirectlyAnsweredRequestsSpanEndsAfterItsAnswerWasHandedToTheTransport() async throws {
        let directory = NSTemporaryDirectory() + "hostscope-mcp-span-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let transport = ScriptedTransport([
            Self.initialize, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}",
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"list_hosts\"}}",
        ])
        let configuration = MCPConfiguration(
            fleet: ResolvedFleet(hosts: [.local]), root: nil,
            settings: CoreSettings(database: directory + "/hostscope.sqlite"))
        let tracer = RingBufferTracer(resource: TraceRuntime.resource)
        try await withTracer(tracer) { try await MCPServer.run(configuration, transport: transport) }

        let answers = await transport.answers
        #expect(answers.count == 3, "\(answers)")
        #expect(answers.last?.contains("\"structuredContent\"") == true, "\(answers)")
        let handedOver = await transport.handedOver
        let answered = await transport.answered
        let spans = tracer.finishedSpans()
        for (id, name) in [(2, "tools/list"), (3, "tools/call list_hosts")] {
            let span = try #require(spans.first { $0.name == name }, "\(spans.map(\.name))")
            let received = try #require(handedOver[id])
            let sent = try #require(answered[id])
            #expect(span.kind == .server)
            #expect(span.startNanoseconds >= received)
            #expect(span.endNanoseconds >= sent, "\(name) ended \(sent - span.endNanoseconds) ns before its answer")
        }
    }

    @Test func aRequestsSpanStartsWhenTheTransportHandedItOverBeforeItWasParsed() async throws {
        let registry = RequestRegistry()
        let guarded = GuardedTransport(ScriptedTransport([]), maxMessageBytes: 1 << 20, registry: registry)
        _ = await guarded.route(Data(Self.initialize.utf8))
        let before = TraceClock.now()
        _ = await guarded.route(Data("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"resources/list\"}".utf8))
        let after = TraceClock.now()
        let info = try #require(registry.take("7"))
        let received = try #require(info.receivedAt)
        #expect(received >= before && received <= after)

        // Handled later (the library's queue, a busy pool): the span still starts at the hand-over.
        try await Task.sleep(for: .milliseconds(5))
        let tracer = RingBufferTracer(resource: TraceRuntime.resource)
        let tracing = RequestTracing(
            sessionID: "s", registry: registry, captureContent: false, networkTransport: "pipe")
        try await withTracer(tracer) {
            try await tracing.withSpan("resources/list", target: nil, info: info) { _, _ in }
        }
        let span = try #require(tracer.finishedSpans().first)
        #expect(span.startNanoseconds == received)
        #expect(span.attributes["jsonrpc.request.id"] == "7")
    }
}
