import Foundation

/// What kind of host a connection reaches, learnt once per connection.
public struct HostPlatform: Sendable, Equatable {
    public var os: OSInfo
    /// `ps` (and so most of the userland) is BusyBox.
    public var isBusyBox: Bool
    /// `mpstat` (sysstat) is installed.
    public var hasSysstat: Bool

    public init(os: OSInfo, isBusyBox: Bool = false, hasSysstat: Bool = false) {
        self.os = os
        self.isBusyBox = isBusyBox
        self.hasSysstat = hasSysstat
    }

    /// The detection script: os-release, `uname -snrm`, and which userland provides `ps`.
    public static let detectionCommand =
        "export LC_ALL=C LANG=C; echo @@os; cat /etc/os-release 2>/dev/null || cat /usr/lib/os-release 2>/dev/null; "
        + "uname -snrm; echo @@ps; p=$(command -v ps); echo \"$p\"; ls -l \"$p\" 2>/dev/null; "
        + "echo @@sysstat; command -v mpstat 2>/dev/null; echo @@end"

    /// Reads the detection script's output.
    public static func parse(_ output: ProbeOutput) throws(ParseError) -> HostPlatform {
        guard output.isComplete, let osText = output.section("os") else {
            throw ParseError(source: "platform detection", message: "the detection script did not complete")
        }
        let os = try OSReleaseParser.parse(osText)
        let psText = output.section("ps") ?? ""
        let busyBox = psText.contains("busybox")
        let sysstat = !(output.section("sysstat") ?? "").trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
        return HostPlatform(os: os, isBusyBox: busyBox, hasSysstat: sysstat)
    }
}

