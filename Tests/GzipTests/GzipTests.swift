import Foundation
import Gzip
import Testing

@Suite("gzip through the system zlib")
struct GzipTests {
    static func sample(_ count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        for index in 0..<count {
            // Text-like data with repeats, as telemetry is, plus some noise.
            seed = seed &* 6_364_136_223_846_793_005 &+ 1
            bytes.append(index % 7 == 0 ? UInt8(truncatingIfNeeded: seed >> 33) : UInt8(ascii: "a") + UInt8(index % 23))
        }
        return bytes
    }

    /// Runs python3's gzip module on `input`, returning its stdout.
    static func python(_ code: String, input: [UInt8]) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", code]
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        let writer = Thread {
            stdin.fileHandleForWriting.write(Data(input))
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let data = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return Array(data)
    }

    @Test("What it compresses, Python's gzip module reads back byte for byte, at every level")
    func pythonReadsIt() throws {
        let input = Self.sample(300_000)
        for level in [Gzip.Level.fastest, .standard, .smallest] {
            let compressed = Gzip.compress(input, level: level)
            #expect(compressed.count < input.count / 2)
            #expect(Array(compressed.prefix(2)) == [0x1F, 0x8B])
            let back = try Self.python(
                "import gzip, sys; sys.stdout.buffer.write(gzip.decompress(sys.stdin.buffer.read()))", input: compressed
            )
            #expect(back == input)
        }
    }

    @Test("It reads what Python's gzip module writes, several members one after another included")
    func readsPython() throws {
        let input = Self.sample(100_000)
        let twoMembers = try Self.python(
            "import gzip, sys; d = sys.stdin.buffer.read(); "
                + "sys.stdout.buffer.write(gzip.compress(d[:40000]) + gzip.compress(d[40000:]))",
            input: input)
        #expect(try Gzip.decompress(twoMembers) == input)
    }

    @Test("Empty input makes a valid empty stream")
    func empty() throws {
        let compressed = Gzip.compress([])
        #expect(try Gzip.decompress(compressed) == [])
    }

    @Test("A damaged, a cut and an oversized stream are refused with what is wrong")
    func refusals() throws {
        let compressed = Gzip.compress(Self.sample(50_000))
        #expect(throws: GzipError.self) { try Gzip.decompress(Array("not gzip at all".utf8)) }
        do {
            _ = try Gzip.decompress(Array(compressed.prefix(compressed.count / 2)))
            Issue.record("a cut stream was accepted")
        } catch {
            #expect(error.code == .truncated)
        }
        do {
            _ = try Gzip.decompress(compressed, maximumBytes: 10_000)
            Issue.record("the limit was ignored")
        } catch {
            #expect(error.code == .tooLarge)
            #expect(error.message.contains("10000"))
        }
    }
}
