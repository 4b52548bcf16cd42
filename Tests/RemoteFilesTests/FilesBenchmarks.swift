import Foundation
import RemoteFiles
import SSHTransport
import TestSupport
import Testing
import ValueFormats

#if canImport(Glibc)
    import Glibc
#endif

/// The Files benchmark of Scripts/bench/files, against the loopback sshd: listing a
/// 10,000-entry directory next to OpenSSH `sftp -b` doing `ls -l`, downloading a 200 MB file
/// next to `sftp` get, and `files cat --tail 100` of a 1 GB log. Off unless `HOSTSCOPE_BENCH=1`;
/// run it in release mode through Scripts/bench/files/run.sh.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["HOSTSCOPE_BENCH"] == "1"), .serialized)
struct FilesBenchmarks {
    struct Row {
        var measurement: String
        var milliseconds: [Double]
        var bytes: Double? = nil

        var median: Double { milliseconds.sorted()[milliseconds.count / 2] }
        var throughput: String {
            guard let bytes else { return "" }
            return String(format: "%.0f MB/s", bytes / 1e6 / (median / 1000))
        }
    }

    private let iterations = Int(ProcessInfo.processInfo.environment["HOSTSCOPE_BENCH_ITERATIONS"] ?? "") ?? 7

    private func ms(_ duration: Duration) -> Double {
        duration.inMilliseconds
    }

    private func time(_ count: Int, _ body: () async throws -> Void) async throws -> [Double] {
        try await body()  // warm-up: caches, first connection
        var samples: [Double] = []
        for _ in 0..<count {
            let start = ContinuousClock.now
            try await body()
            samples.append(ms(start.duration(to: .now)))
        }
        return samples
    }

    /// Runs a program with its output discarded; fails the benchmark if it fails.
    private func run(_ arguments: [String], stdin: String? = nil) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(arguments.joined(separator: " ")): \(message)")
    }

    @Test func filesAgainstOpenSSH() async throws {
        let server = try SSHTestServer.shared()
        let tree = try FilesTestTree(prefix: "hostscope-bench-files")
        defer { tree.remove() }
        let huge = try tree.makeHugeDirectory("huge", count: 10_000)
        let big = try tree.makeRandomFile("big.bin", size: 200_000_000)
        let log = tree.root + "/app.log"
        try run([
            "/bin/sh", "-c",
            "yes 'app[4242]: 2026-11-21T19:22:00.123Z INFO request served path=/api/v1/items status=200 ms=12' | head -c 1073741824 > '\(log)' && chmod 644 '\(log)'",
        ])
        let local = NSTemporaryDirectory() + "hostscope-bench-get-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: local, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: local) }

        let hostscope = Repository.productsDirectory.appendingPathComponent("hostscope").path
        let connection = ["-p", String(server.port), "-i", server.keyPath, "--known-hosts", server.knownHostsPath]
        let target = "\(server.user)@\(server.host)"
        let openssh = [
            "-i", server.keyPath, "-o", "IdentitiesOnly=yes", "-o", "UserKnownHostsFile=\(server.knownHostsPath)",
            "-o", "BatchMode=yes", "-P", String(server.port),
        ]
        func sftpBatch(_ commands: String) throws {
            let batch = local + "/batch.txt"
            try commands.write(toFile: batch, atomically: true, encoding: .utf8)
            try run(["/usr/bin/sftp", "-q", "-b", batch] + openssh + [target])
        }
        var rows: [Row] = []

        // Listing 10,000 entries.
        rows.append(
            Row(
                measurement: "OpenSSH `sftp -b` connect only (`pwd`)",
                milliseconds: try await time(iterations) {
                    try sftpBatch("pwd\n")
                }))
        rows.append(
            Row(
                measurement: "OpenSSH `sftp -b`: `ls -l` of 10,000 entries",
                milliseconds: try await time(iterations) {
                    try sftpBatch("ls -l \(huge)\n")
                }))
        rows.append(
            Row(
                measurement: "`hostscope files ls --long` of 10,000 entries",
                milliseconds: try await time(iterations) {
                    try run([hostscope, "files", "ls", "--long", "\(target):\(huge)"] + connection)
                }))
        rows.append(
            Row(
                measurement: "`hostscope files ls --json` of 10,000 entries",
                milliseconds: try await time(iterations) {
                    try run([hostscope, "files", "ls", "--json", "\(target):\(huge)"] + connection)
                }))
        let session = try await SSHSession.connect(filesHarnessOptions(server))
        let browser = try await RemoteFileBrowser.open(session: session, host: "bench")
        rows.append(
            Row(
                measurement: "library `list` of 10,000 entries, warm session",
                milliseconds: try await time(iterations) {
                    var count = 0
                    try await browser.list(RemotePath(huge)) { count += $0.count }
                    #expect(count == 10_000)
                }))

        // Downloading 200 MB.
        let getRuns = max(3, iterations / 2)
        rows.append(
            Row(
                measurement: "OpenSSH `sftp` get of 200 MB",
                milliseconds: try await time(getRuns) {
                    try sftpBatch("get \(big) \(local)/openssh.bin\n")
                }, bytes: 200e6))
        rows.append(
            Row(
                measurement: "`hostscope files get` of 200 MB (SHA-256 included)",
                milliseconds: try await time(getRuns) {
                    try run(
                        [hostscope, "files", "get", "--no-resume", "\(target):\(big)", local + "/hostscope.bin"]
                            + connection)
                }, bytes: 200e6))
        rows.append(
            Row(
                measurement: "`hostscope files get --no-checksum` of 200 MB",
                milliseconds: try await time(getRuns) {
                    try run(
                        [
                            hostscope, "files", "get", "--no-resume", "--no-checksum", "\(target):\(big)",
                            local + "/unhashed.bin",
                        ] + connection)
                }, bytes: 200e6))
        rows.append(
            Row(
                measurement: "library `download` of 200 MB, warm session",
                milliseconds: try await time(getRuns) {
                    let result = try await browser.download(
                        RemotePath(big), to: local + "/library.bin", options: DownloadOptions(resume: false))
                    #expect(result.bytes == 200_000_000)
                }, bytes: 200e6))
        #expect(try sha256(ofFile: local + "/hostscope.bin") == sha256(ofFile: big))

        // The end of a 1 GB log.
        rows.append(
            Row(
                measurement: "`hostscope files cat --tail 100` of a 1 GB log",
                milliseconds: try await time(iterations * 3) {
                    try run([hostscope, "files", "cat", "--tail", "100", "\(target):\(log)"] + connection)
                }))
        rows.append(
            Row(
                measurement: "library `read(.tail(lines: 100))` of a 1 GB log, warm session",
                milliseconds: try await time(iterations * 3) {
                    let preview = try await browser.read(
                        RemotePath(log), options: ReadOptions(range: .tail(lines: 100)))
                    // The log was cut at 1 GiB mid-line: 100 lines, the last without its newline.
                    #expect(preview.bytes.split(separator: 0x0A).count == 100)
                }))
        await session.close()

        var table = "| measurement | median (ms) | min (ms) | throughput |\n|---|---:|---:|---:|\n"
        for row in rows {
            table += String(
                format: "| %@ | %.1f | %.1f | %@ |\n", row.measurement, row.median, row.milliseconds.min() ?? 0,
                row.throughput)
        }
        func median(_ prefix: String) -> Double { rows.first { $0.measurement.hasPrefix(prefix) }!.median }
        table += String(
            format: "\nls: hostscope CLI / sftp -b = %.2f× (target ≤ 1.2×)\n",
            median("`hostscope files ls --long`") / median("OpenSSH `sftp -b`: `ls -l`"))
        table += String(
            format: "get: hostscope CLI throughput / sftp = %.2f× (target ≥ 0.8×)\n",
            median("OpenSSH `sftp` get") / median("`hostscope files get`"))
        table += String(
            format: "get --no-checksum: hostscope CLI throughput / sftp = %.2f×\n",
            median("OpenSSH `sftp` get") / median("`hostscope files get --no-checksum`"))
        table += String(
            format: "cat --tail 100 of 1 GB: %.1f ms end to end (target < 100 ms)\n",
            median("`hostscope files cat --tail 100`"))
        print(table)
        if let path = ProcessInfo.processInfo.environment["HOSTSCOPE_BENCH_OUT"] {
            try table.write(toFile: path, atomically: true, encoding: .utf8)
        }
    }
}
