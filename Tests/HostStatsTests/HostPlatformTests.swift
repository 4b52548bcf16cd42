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
        #expect(mac.os == OSInfo(family: "darwin", name: "macOS 14.4.1", kernel: "23.4.0", arch: "arm64"))
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
