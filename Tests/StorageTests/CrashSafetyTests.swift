import Foundation
import HostStats
import HostscopeCore
import Synchronization
import Testing
import ValueFormats

@testable import Storage

#if canImport(Glibc)
    import Glibc
#endif

/// `kill -9` of a process in the middle of writing must leave a sound file holding every
/// committed batch. The writer is this test binary itself, started again with an environment
/// variable that enables only ``crashWriterChildProcess()``: the code under test is the
/// store's own, with its own pragmas and transactions.
@Suite struct CrashSafetyTests {
    static let writerVariable = "HOSTSCOPE_TEST_CRASH_WRITER_DB"
    static let childDatabase = ProcessInfo.processInfo.environment[writerVariable]
    static let recordsPerBatch = 25
    static let spansPerBatch = 40

    static func historyBatch(_ batch: Int) -> [SnapshotRecord] {
        (0..<recordsPerBatch).map { index in
            index % 10 == 9
                ? Records.failure("host\(index)", at: Double(batch))
                : Records.snapshot("host\(index)", at: Double(batch), processes: 30)
        }
    }

    static func spanBatch(_ batch: Int) -> [StoredSpan] {
        (0..<spansPerBatch).map { index in
            SpanStoreTests.span(
                String(format: "%08x%08x", batch, index), trace: String(format: "%032x", batch + 1),
                start: Int64(batch) * 1_000 + Int64(index))
        }
    }

    /// The child's side: append batches until killed, reporting each commit on stdout.
    @Test(.enabled(if: childDatabase != nil, "runs only as the child process of the crash test"))
    func crashWriterChildProcess() async throws {
        let database = try await StorageDatabase.open(at: try #require(Self.childDatabase))
        let deadline = ContinuousClock.now + .seconds(120)
        var batch = 0
        // Bounded, in case the parent died without killing this process.
        while ContinuousClock.now < deadline, batch < 100_000 {
            try await database.history.append(Self.historyBatch(batch))
            Self.report("history \(batch)")
            try await database.spans.insert(Self.spanBatch(batch), incrementing: ["span_batches": 1])
            Self.report("spans \(batch)")
            batch += 1
        }
    }

    /// Unbuffered, so that a line on the pipe means the commit before it is done.
    private static func report(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
    }

    /// The last batch numbers the child reported committed.
    private struct Progress {
        var history = -1
        var spans = -1
        var finished = false
    }

    @Test(.enabled(if: childDatabase == nil), .timeLimit(.minutes(3)))
    func killingAWriterMidBatchLeavesASoundFileWithEveryCommittedBatch() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("crash.sqlite")
        // This process reads the file while the child writes it, as `history` would beside `watch`.
        let reader = try await StorageDatabase.open(at: path)

        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        child.arguments = [
            "--testing-library", "swift-testing", "--filter", "CrashSafetyTests/crashWriterChildProcess",
        ]
        var environment = ProcessInfo.processInfo.environment
        environment[Self.writerVariable] = path
        child.environment = environment
        let output = Pipe()
        child.standardOutput = output
        child.standardError = FileHandle.nullDevice
        try child.run()

        let progress = Lock(Progress())
        let handle = output.fileHandleForReading
        DispatchQueue.global().async {
            var pending = ""
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                pending += String(decoding: data, as: UTF8.self)
                while let newline = pending.firstIndex(of: "\n") {
                    let words = pending[..<newline].split(separator: " ")
                    pending = String(pending[pending.index(after: newline)...])
                    guard words.count == 2, let number = Int(words[1]) else { continue }
                    progress.withLock { state in
                        if words[0] == "history" { state.history = number }
                        if words[0] == "spans" { state.spans = number }
                    }
                }
            }
            progress.withLock { $0.finished = true }
        }

        // Let it commit a few dozen batches, checking from here that no read ever sees half of one.
        let start = ContinuousClock.now
        while progress.withLock({ $0.history }) < 30 {
            let committed = progress.withLock { $0.history }
            let count = try await reader.history.count()
            #expect(count % Self.recordsPerBatch == 0, "a reader saw part of a batch: \(count) records")
            #expect(count >= (committed + 1) * Self.recordsPerBatch, "a reported commit was not visible")
            if progress.withLock({ $0.finished }) || ContinuousClock.now - start > .seconds(90) {
                Issue.record("the writer stopped or stalled at batch \(committed)")
                child.terminate()
                return
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        // A varying delay so that the kill lands at different points of a transaction from run to run.
        try await Task.sleep(for: .microseconds(Int.random(in: 0..<20_000)))
        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        #expect(child.terminationReason == .uncaughtSignal)
        #expect(child.terminationStatus == SIGKILL)
        while !progress.withLock({ $0.finished }) { try await Task.sleep(for: .milliseconds(5)) }
        let reported = progress.withLock { $0 }
        try await reader.close()

        // Open afresh, as the next `watch` or `history` would: SQLite recovers the WAL left behind.
        let database = try await StorageDatabase.open(at: path, mode: .existingOnly)
        #expect(try await database.integrityCheck().isOK)

        var recordsPerBatch: [Int: Int] = [:]
        for try await stored in database.history.records(HistoryQuery(), pageSize: 200) {
            let record = try stored.record()
            let batch = Int(record.collectedAt.timeIntervalSince(Records.epoch).rounded())
            #expect(record == Self.historyBatch(batch)[recordsPerBatch[batch, default: 0]])
            recordsPerBatch[batch, default: 0] += 1
        }
        let lastHistory = try #require(recordsPerBatch.keys.max())
        #expect([reported.history, reported.history + 1].contains(lastHistory), "at most the batch in flight is lost")
        #expect(Set(recordsPerBatch.keys) == Set(0...lastHistory))
        #expect(recordsPerBatch.values.allSatisfy { $0 == Self.recordsPerBatch })

        let spanCount = try await database.spans.count()
        #expect(spanCount % Self.spansPerBatch == 0)
        let spanBatches = spanCount / Self.spansPerBatch
        #expect([reported.spans + 1, reported.spans + 2].contains(spanBatches))
        // The counter was incremented in the same transactions as the spans.
        #expect(try await database.meta.integer("span_batches") == Int64(spanBatches))
        for batch in [0, spanBatches - 1] {
            let trace = try await database.spans.trace(String(format: "%032x", batch + 1))
            #expect(
                trace
                    == Self.spanBatch(batch).map { span in
                        var stored = span
                        stored.traceID = stored.traceID.lowercased()
                        return stored
                    })
        }
        // And the file takes new writes after the crash.
        try await database.history.append(Self.historyBatch(lastHistory + 1))
        #expect(try await database.history.count() == (lastHistory + 2) * Self.recordsPerBatch)
    }
}
