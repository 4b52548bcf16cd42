import Foundation
import HostStats
import Testing

@Suite struct HostPlatformTests {
    private func platform(_ sections: [(String, String)]) throws -> HostPlatform {
        let text = sections.map { "@@\($0.0)\n\($0.1)" }.joined(separator: "\n") + "\n@@end\n"
        return try HostPlatform.parse(ProbeOutput(text))
    }

    @Test func aMacIsDarwinNamedBySwVers() throws {
        let mac = try platform([
            ("os", "Darwin v-mbp.local 23.4.0 arm64"),
            ("sw_vers", "ProductName:\t\tmacOS\nProductVersion:\t\t14.4.1\nBuildVersion:\t\t23E224"),
            ("ps", "/bin/ps\n-rwsr-xr-x  1 root  wheel  51200 Jul 15  2019 /bin/ps\nps: illegal option -- -"),
            ("pagesize", "16384"),
        ])
        var expected = OSInfo(family: "darwin", name: "macOS 14.4.1", kernel: "23.4.0", arch: "arm64")
        expected.nodename = "v-mbp.local"
        #expect(mac.os == expected)
        #expect(mac.isDarwin)
        #expect(!mac.isBusyBox)
        #expect(mac.pageSize == 16384)
    }

    @Test func olderMacsNameThemselvesMacOSX() throws {
        let mac = try platform([
            ("os", "Darwin kbrazil-mac 18.7.0 x86_64"),
            ("sw_vers", "ProductName:\tMac OS X\nProductVersion:\t10.14.6\nBuildVersion:\t18G84"),
        ])
        #expect(mac.os.name == "Mac OS X 10.14.6")
    }

    @Test func busyBoxIsRecognisedByALinkOrByTheBannerOfItsPs() throws {
        let linked = try platform([
            (
                "os",
                "NAME=\"Alpine Linux\"\nID=alpine\nPRETTY_NAME=\"Alpine Linux v3.20\"\nLinux a1 6.6.31-0-lts x86_64"
            ),
            ("ps", "/bin/ps\nlrwxrwxrwx    1 root     root            12 May 22 12:00 /bin/ps -> /bin/busybox"),
        ])
        #expect(linked.isBusyBox)
        #expect(linked.os.name == "Alpine Linux v3.20")
        // Applets installed as hard links: no link target, but ps --help names BusyBox.
        let hardLinked = try platform([
            ("os", "Linux router 5.15.0 mips"),
            (
                "ps",
                "/bin/ps\n-rwxr-xr-x    300 root     root        772880 Jan  1  1970 /bin/ps\nBusyBox v1.36.1 (2024-03-22) multi-call binary."
            ),
        ])
        #expect(hardLinked.isBusyBox)
    }

    @Test func procpsBesideAnInstalledBusyBoxIsNotBusyBox() throws {
        let debian = try platform([
            ("os", "ID=debian\nLinux web1 6.1.0-18-amd64 x86_64"),
            ("ps", "/usr/bin/ps\n-rwxr-xr-x 1 root root 154344 Dec 22  2022 /usr/bin/ps\n"),
        ])
        #expect(!debian.isBusyBox)
    }

    @Test func withoutGetconfThePageSizeComesFromSmaps() throws {
        #expect(
            try platform([("os", "Linux a 6.1.0 aarch64"), ("pagesize", "KernelPageSize:       64 kB")]).pageSize
                == 65536)
        #expect(try platform([("os", "Linux a 6.1.0 x86_64"), ("pagesize", "4096")]).pageSize == 4096)
        // Neither: the common size, rather than a guess from nothing.
        #expect(try platform([("os", "Linux a 6.1.0 x86_64"), ("pagesize", "")]).pageSize == 4096)
    }

    @Test func eachPlatformGetsItsProbeAndTheRecordNamesIt() throws {
        let linux = HostPlatform(os: OSInfo(family: "linux"))
        let busybox = HostPlatform(os: OSInfo(family: "linux"), isBusyBox: true)
        let mac = HostPlatform(os: OSInfo(family: "darwin", name: "macOS 14.4.1"))
        #expect(try HostCollector.route(.auto, platform: linux, host: "h") == .proc)
        #expect(try HostCollector.route(.proc, platform: linux, host: "h") == .proc)
        #expect(try HostCollector.route(.tools, platform: linux, host: "h") == .tools)
        for kind in CollectorKind.allCases {
            #expect(try HostCollector.route(kind, platform: busybox, host: "h") == .busybox)
            #expect(try HostCollector.route(kind, platform: mac, host: "h") == .macos)
        }
        let freebsd = HostPlatform(os: OSInfo(family: "freebsd", name: "FreeBSD 14.0"))
        #expect(throws: CollectionError.self) { try HostCollector.route(.auto, platform: freebsd, host: "bsd1") }
        do {
            _ = try HostCollector.route(.auto, platform: freebsd, host: "bsd1")
        } catch {
            #expect(error.message.hasPrefix("bsd1: FreeBSD 14.0 hosts are not supported"))
        }
    }
}

/// The detection script run by this machine's `sh`, with fake `uname` and `getconf` in front of
/// the real ones where a test needs another machine.
@Suite struct DetectionScriptTests {
    private func detect(path: String? = nil, pathOnly: Bool = false) throws -> (
        output: ProbeOutput, platform: HostPlatform
    ) {
        let output = ProbeOutput(try LocalShell.run(HostPlatform.detectionCommand, path: path, pathOnly: pathOnly))
        return (output, try HostPlatform.parse(output))
    }

    /// A directory of executable scripts named by `tools`, removed after `body`.
    private func withTools<T>(_ tools: [String: String], _ body: (String) throws -> T) throws -> T {
        let directory = NSTemporaryDirectory() + "hostscope-detect-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for (name, script) in tools {
            try Data(("#!/bin/sh\n" + script + "\n").utf8).write(to: URL(fileURLWithPath: directory + "/" + name))
            chmod(directory + "/" + name, 0o755)
        }
        return try body(directory)
    }

    @Test func osReleaseComesOutAsTheFileHoldsIt() throws {
        let (output, platform) = try detect()
        let file = try String(contentsOfFile: "/etc/os-release", encoding: .utf8)
        let fileLines = file.split(separator: "\n", omittingEmptySubsequences: false).dropLast(
            file.hasSuffix("\n") ? 1 : 0)
        let section = try #require(output.section("os")).split(separator: "\n", omittingEmptySubsequences: false)
        // os-release, then uname's line.
        #expect(Array(section.prefix(fileLines.count)) == Array(fileLines))
        #expect(section.count == fileLines.count + 1)
        #expect(platform.os.family == "linux")
        #expect(platform.os.name != nil)
        #expect(platform.os.arch == thisMachine())
        #expect(platform.pageSize == UInt64(sysconf(Int32(_SC_PAGESIZE))))
        #expect(platform.userNames[0] == "root")
    }

    @Test func anX86PageIs4096WithoutAskingGetconf() throws {
        // A getconf that would say otherwise is not run on x86_64 (this machine, or a uname saying so).
        try withTools(["getconf": "echo 65536", "uname": "echo Linux box 6.1.0 x86_64"]) { directory in
            let platform = try detect(path: directory).platform
            #expect(platform.pageSize == 4096)
        }
        try withTools(["getconf": "echo 65536", "uname": "echo Linux box 4.19.0 i686"]) { directory in
            let platform = try detect(path: directory).platform
            #expect(platform.pageSize == 4096)
        }
    }

    /// A PATH of only `directory`: the real `uname` and `cat`, a `grep` that notes each run in `grep.log` before
    /// running the real one, and a `ps` as `makePS` leaves it.
    private func detectBusyBox(_ makePS: (String) throws -> Void) throws -> (busyBox: Bool, grepRan: Bool) {
        try withTools(["grep": "echo \"$@\" >> \"${0%/*}/grep.log\"; exec /bin/grep \"$@\""]) { directory in
            for tool in ["uname", "cat"] {
                try FileManager.default.createSymbolicLink(
                    atPath: directory + "/" + tool, withDestinationPath: "/bin/" + tool)
            }
            try makePS(directory)
            let platform = try detect(path: directory, pathOnly: true).platform
            // Only the grep over ps's binary counts: the network devices' attributes are read by grep too.
            let log = (try? String(contentsOfFile: directory + "/grep.log", encoding: .utf8)) ?? ""
            return (platform.isBusyBox, log.contains("BusyBox v"))
        }
    }

    /// An executable file that holds BusyBox's banner, as its binary does.
    private func writeBusyBoxBinary(_ path: String) throws {
        try Data("#!/bin/sh\n# BusyBox v1.36.1 (2023-06-01) multi-call binary.\n".utf8).write(
            to: URL(fileURLWithPath: path))
        chmod(path, 0o755)
    }

    @Test func busyBoxIsRecognisedByItsPSAndAPlainPSIsNotRead() throws {
        // ps a link to the BusyBox binary (Alpine, most embedded systems).
        let linked = try detectBusyBox { directory in
            try writeBusyBoxBinary(directory + "/multicall")
            try FileManager.default.createSymbolicLink(atPath: directory + "/ps", withDestinationPath: "multicall")
        }
        #expect(linked == (true, true))
        // ps a hard link of busybox, which is on the PATH too.
        let hardLinked = try detectBusyBox { directory in
            try writeBusyBoxBinary(directory + "/busybox")
            try FileManager.default.linkItem(atPath: directory + "/busybox", toPath: directory + "/ps")
        }
        #expect(hardLinked == (true, true))
        // A plain ps with no busybox about (procps, macOS): the file is not read, whatever it holds.
        let plain = try detectBusyBox { directory in try writeBusyBoxBinary(directory + "/ps") }
        #expect(plain == (false, false))
        // A busybox beside a ps of another userland does not make it BusyBox.
        let beside = try detectBusyBox { directory in
            try writeBusyBoxBinary(directory + "/busybox")
            try Data("#!/bin/sh\n# procps-ng\n".utf8).write(to: URL(fileURLWithPath: directory + "/ps"))
            chmod(directory + "/ps", 0o755)
        }
        #expect(beside == (false, true))
    }

    @Test func otherMachinesAskGetconfAndWithoutItSmaps() throws {
        try withTools(["getconf": "echo 65536", "uname": "echo Linux pi 6.1.0 aarch64"]) { directory in
            let platform = try detect(path: directory).platform
            #expect(platform.pageSize == 65536)
            #expect(platform.os.arch == "aarch64")
        }
        // No getconf: the kernel's own page size, from /proc/self/smaps.
        try withTools(["getconf": "exit 127", "uname": "echo Linux pi 6.1.0 aarch64"]) { directory in
            let output = try detect(path: directory).output
            #expect(output.section("pagesize")?.hasPrefix("KernelPageSize:") == true)
            #expect(try HostPlatform.parse(output).pageSize == UInt64(sysconf(Int32(_SC_PAGESIZE))))
        }
    }
}

/// `uname -m` of this machine.
private func thisMachine() -> String {
    var name = utsname()
    uname(&name)
    return withUnsafeBytes(of: &name.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
}

@Suite struct SwVersParserTests {
    @Test func productNameAndVersionMakeTheName() throws {
        let text = "ProductName:\t\tmacOS\nProductVersion:\t\t14.4.1\nBuildVersion:\t\t23E224\n"
        #expect(try SwVersParser.parse(text) == OSInfo(family: "darwin", name: "macOS 14.4.1"))
        #expect(ToolRecognizer.recognize(text) == "sw_vers")
        #expect(try ToolParser.named("sw_vers")?.parse(text).os?.name == "macOS 14.4.1")
    }

    @Test func otherTextIsRefused() {
        #expect(throws: ParseError.self) { try SwVersParser.parse("Darwin mac 23.4.0 arm64\n") }
    }
}
