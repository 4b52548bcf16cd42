import Foundation

/// What kind of host a connection reaches, learnt once per connection.
public struct HostPlatform: Sendable, Equatable {
    public var os: OSInfo
    /// `ps` (and so most of the userland) is BusyBox.
    public var isBusyBox: Bool
    /// `mpstat` (sysstat) is installed.
    public var hasSysstat: Bool
    /// The memory page size, for resident sizes counted in pages (4096 on most hosts, 16384 or
    /// 65536 on some ARM kernels).
    public var pageSize: UInt64
    /// Local account names by uid, from `/etc/passwd`; accounts only a directory service knows
    /// are shown by number, as BusyBox `ps` does.
    public var userNames: [UInt32: String]

    public init(
        os: OSInfo, isBusyBox: Bool = false, hasSysstat: Bool = false, pageSize: UInt64 = 4096,
        userNames: [UInt32: String] = [:]
    ) {
        self.os = os
        self.isBusyBox = isBusyBox
        self.hasSysstat = hasSysstat
        self.pageSize = pageSize
        self.userNames = userNames
    }

    /// The detection script: os-release, `uname -snrm`, and which userland provides `ps`.
    public static let detectionCommand =
        "export LC_ALL=C LANG=C; echo @@os; cat /etc/os-release 2>/dev/null || cat /usr/lib/os-release 2>/dev/null; "
        + "uname -snrm; echo @@ps; p=$(command -v ps); echo \"$p\"; ls -l \"$p\" 2>/dev/null; "
        + "echo @@sysstat; command -v mpstat 2>/dev/null; echo @@pagesize; getconf PAGESIZE 2>/dev/null; "
        + "echo @@passwd; cat /etc/passwd 2>/dev/null; echo @@end"

    /// Reads the detection script's output.
    public static func parse(_ output: ProbeOutput) throws(ParseError) -> HostPlatform {
        guard output.isComplete, let osText = output.section("os") else {
            throw ParseError(source: "platform detection", message: "the detection script did not complete")
        }
        let os = try OSReleaseParser.parse(osText)
        let psText = output.section("ps") ?? ""
        let busyBox = psText.contains("busybox")
        let sysstat = !(output.section("sysstat") ?? "").trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
        let pageSize = output.section("pagesize").flatMap { UInt64($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        var names: [UInt32: String] = [:]
        for line in (output.section("passwd") ?? "").split(separator: "\n") {
            let fields = line.split(separator: ":", omittingEmptySubsequences: false)
            guard fields.count >= 3, let uid = UInt32(fields[2]), names[uid] == nil else { continue }
            names[uid] = String(fields[0])
        }
        return HostPlatform(
            os: os, isBusyBox: busyBox, hasSysstat: sysstat, pageSize: pageSize ?? 4096, userNames: names)
    }
}

