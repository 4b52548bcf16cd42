import Foundation
import Glibc
import Logging
import MCP

/// MCP's stdio transport: one JSON-RPC message per line on standard input and output, read on a thread of its
/// own with blocking reads.
///
/// swift-sdk 0.12.1's `StdioTransport` holds a line whole however long it grows, rescans it on every 4 KiB read
/// (a 2 MiB line took 20 s), polls a non-blocking standard input every 10 ms (up to 10 ms on every request) and
/// leaves both descriptors non-blocking for the process that started it. This one keeps at most `maxLineBytes + 1`
/// bytes of a line: the rest of a longer one is read and dropped, and the cut line goes on, longer than the bound,
/// for ``GuardedTransport`` to refuse. End of input ends the stream, and with it the server.
actor StdioLineTransport: Transport {
    nonisolated let logger = Logger(label: "hostscope.mcp.stdio", factory: { _ in SwiftLogNoOpLogHandler() })
    private let input: Int32
    private let output: Int32
    private let maxLineBytes: Int
    private let stream: AsyncThrowingStream<Data, Swift.Error>
    private let continuation: AsyncThrowingStream<Data, Swift.Error>.Continuation
    private var started = false

    init(input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO, maxLineBytes: Int) {
        self.input = input
        self.output = output
        self.maxLineBytes = maxLineBytes
        (stream, continuation) = AsyncThrowingStream<Data, Swift.Error>.makeStream()
    }

    func connect() async throws {
        guard !started else { return }
        started = true
        let reader = Thread { [input, maxLineBytes, continuation] in
            Self.readLines(input, maxLineBytes: maxLineBytes, into: continuation)
        }
        reader.name = "hostscope-mcp-stdin"
        reader.start()
    }

    func disconnect() async {
        continuation.finish()
    }

    /// Writes `data` and its newline with one `writev`, from the message's own bytes (no copy of the answer).
    func send(_ data: Data) async throws {
        try data.withUnsafeBytes { message in try Self.writeLine(message, to: output) }
    }

    /// Writes `message` and a newline to `output`, going on after a short write or a signal.
    static func writeLine(_ message: UnsafeRawBufferPointer, to output: Int32) throws {
        var newline = UInt8(ascii: "\n")
        let total = message.count + 1
        var written = 0
        while written < total {
            let result = withUnsafeMutablePointer(to: &newline) { newline in
                var vectors = [iovec(iov_base: newline, iov_len: 1)]
                if written < message.count, let base = message.baseAddress {
                    vectors.insert(
                        iovec(
                            iov_base: UnsafeMutableRawPointer(mutating: base + written),
                            iov_len: message.count - written),
                        at: 0)
                }
                return writev(output, vectors, Int32(vectors.count))
            }
            if result < 0 {
                if errno == EINTR { continue }
                throw MCPError.transportError(POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO))
            }
            written += result
        }
    }

    func receive() -> AsyncThrowingStream<Data, Swift.Error> {
        stream
    }

    /// Reads `input` to its end, yielding each non-empty line (without its newline), cut to `maxLineBytes + 1`.
    static func readLines(
        _ input: Int32, maxLineBytes: Int, into continuation: AsyncThrowingStream<Data, Swift.Error>.Continuation
    ) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var line: [UInt8] = []
        var overflowing = false
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            var start = 0
            while start < count {
                let newline = buffer[start..<count].firstIndex(of: UInt8(ascii: "\n"))
                let end = newline ?? count
                if !overflowing {
                    let room = maxLineBytes + 1 - line.count
                    line += buffer[start..<min(end, start + room)]
                    overflowing = end - start > room
                }
                if newline != nil {
                    if !line.isEmpty { continuation.yield(Data(line)) }
                    line.removeAll(keepingCapacity: line.count <= 64 * 1024)
                    overflowing = false
                }
                start = end + 1
            }
        }
        if !line.isEmpty { continuation.yield(Data(line)) }
        continuation.finish()
    }
}
