import Foundation
import HostscopeCore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct FigureTextTests {
    /// Sizes around every boundary of `ls -h`'s rounding: below 1024, the tenths below 10, the step to whole
    /// numbers, and the step to the next unit.
    static let sizes: [UInt64] = [
        0, 1, 999, 1000, 1023, 1024, 1025, 1126, 1127, 1536, 2047, 2048, 9_216, 10_188, 10_189, 10_239, 10_240,
        10_241, 102_400, 1_048_063, 1_048_575, 1_048_576, 1_048_577, 1_153_433, 10_485_760, 123_456_789,
        1_073_741_823, 1_073_741_824, 1_073_741_825, 10_737_418_239, 1_099_511_627_775, 1_099_511_627_776,
        1_099_511_627_777, 5_000_000_000_000,
    ]

    @Test func humanSizesAreWhatGNULsDashHPrintsForTheSameSizes() throws {
        let directory = NSTemporaryDirectory() + "hostscope-ls-h-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Sparse files of each size: ls reads the size from stat, whatever the blocks hold.
        var made: [UInt64] = []
        for size in Self.sizes {
            let path = directory + "/" + String(size)
            let descriptor = open(path, O_CREAT | O_WRONLY, 0o644)
            try #require(descriptor >= 0)
            let truncated = ftruncate(descriptor, off_t(size))
            close(descriptor)
            if truncated == 0 { made.append(size) }
        }
        #expect(made.count >= Self.sizes.count - 2, "the file system refused \(Self.sizes.count - made.count) sizes")
        let ls = Process()
        ls.executableURL = URL(fileURLWithPath: "/bin/ls")
        ls.arguments = ["-l", "-h", "-n", directory]
        ls.environment = ["LC_ALL": "C"]
        let pipe = Pipe()
        ls.standardOutput = pipe
        try ls.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        ls.waitUntilExit()
        // -rw-r--r-- 1 0 0 1.1K Nov 21 19:22 1025
        var printed: [UInt64: String] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 9, let size = UInt64(fields[8]) else { continue }
            printed[size] = String(fields[4])
        }
        #expect(printed.count == made.count)
        for size in made {
            #expect(FigureText.humanSize(size) == printed[size], "\(size) bytes")
        }
    }

    @Test func theLargestSizesStayInExbibytes() {
        #expect(FigureText.humanSize(.max) == "16E")
        #expect(FigureText.humanSize(1 << 60) == "1.0E")
    }

    @Test func humanRatesAreHumanSizesPerSecond() {
        #expect(FigureText.humanRate(nil) == "-")
        #expect(FigureText.humanRate(0) == "0B/s")
        #expect(FigureText.humanRate(512.2) == "513B/s")
        #expect(FigureText.humanRate(151_552) == "148K/s")
        #expect(FigureText.humanRate(.nan) == "-")
    }
}
