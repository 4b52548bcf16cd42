import Foundation
import Glibc
import Testing

@testable import HostscopeMCP

/// The stdio transport's writing side, over a real pipe.
struct StdioLineTransportTests {
    /// Reads what `write` puts into a pipe, until the writer's end is closed.
    static func piped(_ write: (Int32) async throws -> Void) async throws -> [UInt8] {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let reader = Task.detached { [ends] in
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(ends[0], $0.baseAddress, $0.count) }
                if count <= 0 { break }
                bytes += buffer[..<count]
            }
            close(ends[0])
            return bytes
        }
        try await write(ends[1])
        close(ends[1])
        return await reader.value
    }

    @Test func eachMessageIsWrittenWholeWithItsNewline() async throws {
        // Larger than a pipe's buffer, so the write completes only as the reader drains it.
        let large = Data((0..<200_000).map { UInt8(ascii: "a") + UInt8($0 % 26) })
        let small = Data("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}".utf8)
        let written = try await Self.piped { output in
            let transport = StdioLineTransport(input: -1, output: output, maxLineBytes: 1024)
            try await transport.send(small)
            try await transport.send(large)
            try await transport.send(Data())
        }
        #expect(written == Array(small) + [0x0A] + Array(large) + [0x0A, 0x0A])
    }
}
