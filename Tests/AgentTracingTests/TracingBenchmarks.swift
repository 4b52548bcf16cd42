import AgentTracing
import Dispatch
import Foundation
import Synchronization
import Testing
import Tracing
import ValueFormats

/// Recording, memory and export figures for Scripts/bench/tracing; run only when HOSTSCOPE_BENCH is set,
/// and meaningful only in a release build (`Scripts/bench/tracing/run.sh` does both).
@Suite(
    .enabled(
        if: ProcessInfo.processInfo.environment["HOSTSCOPE_BENCH"] != nil,
        "benchmarks run only with HOSTSCOPE_BENCH=1, in release mode: Scripts/bench/tracing/run.sh"),
    .serialized)
struct TracingBenchmarks {
    static let environment = ProcessInfo.processInfo.environment
    static let spansPerThread = Int(environment["HOSTSCOPE_BENCH_SPANS"] ?? "") ?? 2_000_000
    static let memorySpans = Int(environment["HOSTSCOPE_BENCH_MEMORY_SPANS"] ?? "") ?? 10_000_000

    /// The workload both sides run: a client span with four attributes.
    @inline(never)
    static func recordOne(_ tracer: RingBufferTracer) {
        let span = tracer.startSpan("exec", ofKind: .client)
        span.setAttribute("server.address", "web1")
        span.setAttribute("process.exit.code", 0)
        span.setAttribute("hostscope.bytes.out", 1_234)
        span.setAttribute("hostscope.collector", "proc")
        span.end()
    }

    /// The same span through swift-distributed-tracing's generic `SpanAttributes` API.
    @inline(never)
    static func recordOneThroughTheProtocol(_ tracer: some Tracer) {
        let span = tracer.startSpan("exec", ofKind: .client)
        span.attributes["server.address"] = "web1"
        span.attributes["process.exit.code"] = 0
        span.attributes["hostscope.bytes.out"] = 1_234
        span.attributes["hostscope.collector"] = "proc"
        span.end()
    }

    static func tracer(capacity: Int = 10_000) -> RingBufferTracer {
        RingBufferTracer(
            capacity: capacity, resource: .hostscope(version: "0.1.0", hostName: "bench"),
            scrubber: SecretScrubber(secrets: ["a-registered-secret"]))
    }

    static func seconds(_ work: () -> Void) -> Double {
        let start = ContinuousClock.now
        work()
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// CPU time of the calling thread, in seconds: unlike wall time, it does not count the time the
    /// thread waited for a core that other processes on a shared machine held.
    static func threadCPUSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Resident and peak resident memory of this process, in bytes, from /proc/self/status.
    static func memory() -> (resident: Int, peak: Int) {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return (0, 0) }
        func field(_ name: String) -> Int {
            for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
                let number = line.split(separator: " ").dropFirst().first { Int($0) != nil }
                return (number.flatMap { Int($0) } ?? 0) * 1024
            }
            return 0
        }
        return (field("VmRSS"), field("VmHWM"))
    }

    @Test func recordingMemoryAndExportFigures() throws {
        var results: [String: Double] = [:]
        if let profile = Self.environment["HOSTSCOPE_BENCH_PROFILE"] {
            // Only the recording loop, for `perf record`: one thread, or two into one tracer with `=2`.
            let tracer = Self.tracer()
            DispatchQueue.concurrentPerform(iterations: profile == "2" ? 2 : 1) { _ in
                if profile == "protocol" {
                    for _ in 0..<Self.spansPerThread { Self.recordOneThroughTheProtocol(tracer) }
                } else {
                    for _ in 0..<Self.spansPerThread { Self.recordOne(tracer) }
                }
            }
            return
        }

        // Memory per held span: resident growth while 200 000 spans fill a store of that size, as the
        // Python side measures it. Measured first and over many spans, so that memory freed earlier in the
        // process and reused here is a small part of the figure.
        do {
            let heldSpans = 200_000
            let start = Self.memory().resident
            let store = Self.tracer(capacity: heldSpans)
            for _ in 0..<heldSpans { Self.recordOne(store) }
            results["memory_bytes_per_held_span"] = Double(Self.memory().resident - start) / Double(heldSpans)
            #expect(store.count == heldSpans)
        }

        // Memory of a 10 000-span ring while 10 million spans pass through it.
        let before = Self.memory().resident
        let ring = Self.tracer(capacity: 10_000)
        var samples: [(spans: Int, resident: Int)] = []
        for index in 1...Self.memorySpans {
            Self.recordOne(ring)
            if index == 20_000 || index == Self.memorySpans / 10 || index == Self.memorySpans {
                samples.append((index, Self.memory().resident))
            }
        }
        #expect(ring.count == 10_000)
        #expect(ring.droppedSpanCount == UInt64(Self.memorySpans - ring.count))
        let growth = samples.last!.resident - samples.first!.resident
        results["memory_spans"] = Double(Self.memorySpans)
        results["memory_capacity"] = 10_000
        results["memory_rss_before_mib"] = Double(before) / 1_048_576
        for sample in samples {
            results["memory_rss_after_\(sample.spans)_mib"] = Double(sample.resident) / 1_048_576
        }
        results["memory_growth_after_full_mib"] = Double(growth) / 1_048_576
        // The bound: once the ring is full (sampled after twice its capacity), passing millions more
        // spans through it adds nothing to speak of.
        #expect(growth < 16 << 20, "resident memory grew by \(growth) bytes after the ring was full")

        // Recording on one thread.
        let single = Self.tracer()
        for _ in 0..<100_000 { Self.recordOne(single) }
        var oneThreadCPU = 0.0
        let oneThread = Self.seconds {
            let start = Self.threadCPUSeconds()
            for _ in 0..<Self.spansPerThread { Self.recordOne(single) }
            oneThreadCPU = Self.threadCPUSeconds() - start
        }
        results["record_1thread_ns_per_span"] = oneThread / Double(Self.spansPerThread) * 1e9
        results["record_1thread_cpu_ns_per_span"] = oneThreadCPU / Double(Self.spansPerThread) * 1e9
        results["record_1thread_spans_per_s"] = Double(Self.spansPerThread) / oneThread

        let protocolTracer = Self.tracer()
        var viaProtocolCPU = 0.0
        _ = Self.seconds {
            let start = Self.threadCPUSeconds()
            for _ in 0..<Self.spansPerThread { Self.recordOneThroughTheProtocol(protocolTracer) }
            viaProtocolCPU = Self.threadCPUSeconds() - start
        }
        results["record_protocol_1thread_cpu_ns_per_span"] = viaProtocolCPU / Double(Self.spansPerThread) * 1e9

        // Recording on two threads into one tracer.
        let shared = Self.tracer()
        let cpu = Lock<[Double]>([])
        let twoThreads = Self.seconds {
            DispatchQueue.concurrentPerform(iterations: 2) { _ in
                let start = Self.threadCPUSeconds()
                for _ in 0..<Self.spansPerThread { Self.recordOne(shared) }
                let used = Self.threadCPUSeconds() - start
                cpu.withLock { $0.append(used) }
            }
        }
        let twoThreadsCPU = cpu.withLock { $0.reduce(0, +) / Double($0.count) }
        results["record_2threads_spans_per_s"] = Double(2 * Self.spansPerThread) / twoThreads
        results["record_2threads_cpu_ns_per_span_per_thread"] = twoThreadsCPU / Double(Self.spansPerThread) * 1e9
        results["record_2threads_speedup"] =
            results["record_2threads_spans_per_s"]! / results["record_1thread_spans_per_s"]!
        // CPU-bound scaling: what two threads would do with a core each, from their CPU time.
        results["record_2threads_cpu_speedup"] = 2 * oneThreadCPU / twoThreadsCPU
        #expect(shared.finishedSpanCount == UInt64(2 * Self.spansPerThread))

        // The same two threads with a tracer each: what the machine allows when nothing is shared.
        let separate = [Self.tracer(), Self.tracer()]
        let twoTracers = Self.seconds {
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                for _ in 0..<Self.spansPerThread { Self.recordOne(separate[index]) }
            }
        }
        results["record_2tracers_spans_per_s"] = Double(2 * Self.spansPerThread) / twoTracers

        // OTLP JSON and flat export of what a full ring holds.
        let spans = ring.finishedSpans()
        let encoder = OTLPJSONEncoder(scope: InstrumentationScope(version: "0.1.0"))
        var otlpBytes = 0
        let otlpRounds = 30
        let otlp = Self.seconds {
            for _ in 0..<otlpRounds {
                encoder.encode(spans, droppedSpanCount: ring.droppedSpanCount) { line in otlpBytes += line.count }
            }
        }
        results["export_otlp_mb_per_s"] = Double(otlpBytes) / otlp / 1e6
        results["export_otlp_spans_per_s"] = Double(spans.count * otlpRounds) / otlp
        results["export_otlp_bytes_per_span"] = Double(otlpBytes) / Double(spans.count * otlpRounds)
        var flatBytes = 0
        let flat = Self.seconds {
            for _ in 0..<otlpRounds { flatBytes += FlatSpanEncoder().encode(spans).count }
        }
        results["export_flat_mb_per_s"] = Double(flatBytes) / flat / 1e6

        let json = try JSONSerialization.data(withJSONObject: results, options: [.sortedKeys, .prettyPrinted])
        if let path = Self.environment["HOSTSCOPE_BENCH_OUT"] {
            try json.write(to: URL(fileURLWithPath: path))
        }
        print(String(decoding: json, as: UTF8.self))
    }
}
