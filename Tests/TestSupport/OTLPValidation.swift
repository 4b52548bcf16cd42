public import Foundation

/// `../shared/tools/validate_otlp_ndjson.py`, run on a file of OTLP JSON lines.
public enum OTLPValidation {
    /// What the validator said.
    public struct Report: Sendable {
        public var status: Int32
        public var output: String

        /// The `N passed, M failed` counts.
        public var passed: Int? { counts?.passed }
        public var failed: Int? { counts?.failed }

        /// Spans whose parent is not in the file.
        public var orphans: Int? {
            guard let range = output.range(of: #"(\d+) orphan spans"#, options: .regularExpression) else { return nil }
            return Int(output[range].split(separator: " ")[0])
        }

        private var counts: (passed: Int, failed: Int)? {
            guard let line = output.split(separator: "\n").last(where: { $0.hasSuffix("failed") }) else { return nil }
            let words = line.split(separator: " ")
            guard words.count == 4, let passed = Int(words[0]), let failed = Int(words[2]) else { return nil }
            return (passed, failed)
        }
    }

    /// Runs the validator; `nil` when the shared folder (and so the validator) is absent.
    public static func validate(_ file: URL) throws -> Report? {
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
        return Report(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }

    /// Runs the validator on bytes written to a temporary file.
    public static func validate(_ bytes: [UInt8]) throws -> Report? {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("hostscope-\(UUID().uuidString).jsonl")
        try Data(bytes).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        return try validate(url)
    }
}
