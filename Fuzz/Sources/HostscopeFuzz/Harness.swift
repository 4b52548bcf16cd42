/// One fuzz target: a name for `HOSTSCOPE_FUZZ_HARNESS` and the function that feeds an input to the code
/// under test. A harness traps (`check`) when the code returns something it promises never to return, so
/// that libFuzzer keeps the input as a crash.
struct Harness: Sendable {
    var name: String
    var run: @Sendable ([UInt8]) -> Void

    static func named(_ name: String) -> Harness? {
        all.first { $0.name == name }
    }

    /// Every harness; `Scripts/fuzz/run.sh` runs them in this order.
    static let all: [Harness] = [
        kernelFiles, tools, df, probe, sshConfig, knownHosts, sse, openAIStream, anthropicStream, json, otlp, glob,
        linePattern, serveRequest,
    ]
}

/// Stops the run with `message` when `condition` is false: a broken promise, which libFuzzer reports as a crash.
func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() {
        fatalError("fuzz check failed: \(message())")
    }
}

/// Reads structured values off the front of an input: a selector byte, a length, a string.
struct FuzzInput {
    private(set) var bytes: ArraySlice<UInt8>

    init(_ bytes: [UInt8]) {
        self.bytes = bytes[...]
    }

    var isEmpty: Bool { bytes.isEmpty }

    mutating func byte() -> UInt8 {
        bytes.popFirst() ?? 0
    }

    mutating func uint64() -> UInt64 {
        var value: UInt64 = 0
        for _ in 0..<8 { value = value << 8 | UInt64(byte()) }
        return value
    }

    /// Up to `limit` bytes, cut at the first NUL (which is consumed).
    mutating func field(limit: Int = 64) -> [UInt8] {
        var result: [UInt8] = []
        while let next = bytes.first, result.count < limit {
            bytes.removeFirst()
            if next == 0 { break }
            result.append(next)
        }
        return result
    }

    /// A field decoded as UTF-8, with invalid sequences replaced as a host's text is.
    mutating func string(limit: Int = 64) -> String {
        String(decoding: field(limit: limit), as: UTF8.self)
    }

    /// Everything left.
    mutating func rest() -> [UInt8] {
        defer { bytes = [] }
        return Array(bytes)
    }
}

/// Text as hostscope turns a host's bytes into text.
func text(_ bytes: some Collection<UInt8>) -> String {
    String(decoding: bytes, as: UTF8.self)
}
