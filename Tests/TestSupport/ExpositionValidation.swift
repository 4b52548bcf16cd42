import Foundation

/// Checks a metrics exposition with the real tools: `promtool check metrics` (Debian's
/// `prometheus` package) for the Prometheus text format, and prometheus_client's strict
/// OpenMetrics parser (`Scripts/check_openmetrics.py`) for OpenMetrics.
public enum ExpositionValidation {
    /// A tool's exit status and everything it printed.
    public struct Report: Sendable {
        public var status: Int32
        public var output: String

        /// Whether promtool found nothing wrong but the camel-case names node_exporter itself gives
        /// its `/proc/meminfo` families (`node_memory_MemTotal_bytes`): promtool's lint flags those on
        /// node_exporter's own output too (exit status 3), and dashboards depend on them as they are.
        public var passesPromtool: Bool {
            guard status == 0 || status == 3 else { return false }
            // The only findings allowed are those node_exporter's own names get (its meminfo, netstat and
            // sockstat fields keep the kernel's spelling; entropy is counted in bits), which hostscope
            // keeps so that dashboards and alerts find them.
            return findings.allSatisfy { line in
                line.hasPrefix("node_")
                    && (line.hasSuffix(" metric names should be written in 'snake_case' not 'camelCase'")
                        || (line.hasPrefix("node_entropy_")
                            && line.hasSuffix(" use base unit \"bytes\" instead of \"bits\"")))
            }
        }

        /// The lines promtool printed.
        public var findings: [String] {
            output.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
        }
    }

    /// `promtool check metrics` on `bytes`: exit status 0 and no output when it finds nothing wrong, 3
    /// with the lint findings, 1 when the text does not parse (see ``Report/passesPromtool``).
    public static func promtool(_ bytes: [UInt8]) throws -> Report {
        try run(["promtool", "check", "metrics"], input: bytes)
    }

    /// The OpenMetrics parser on `bytes`: status 0 and one line per family when it parses.
    public static func openMetrics(_ bytes: [UInt8]) throws -> Report {
        try run(["python3", Repository.root.appendingPathComponent("Scripts/check_openmetrics.py").path], input: bytes)
    }

    static func run(_ arguments: [String], input: [UInt8]) throws -> Report {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let stdin = Pipe()
        let output = Pipe()
        process.standardInput = stdin
        process.standardOutput = output
        process.standardError = output
        try process.run()
        // Written from another thread: a large input would fill the pipe while the tool's output waits.
        let writer = Thread {
            stdin.fileHandleForWriting.write(Data(input))
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Report(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }
}
