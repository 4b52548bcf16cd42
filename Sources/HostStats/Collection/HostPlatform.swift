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
    /// `/sys/class/net/*`'s attributes that do not change while a connection lasts (address, mtu,
    /// speed, duplex …), read once per connection; empty where `/sys` is not there.
    public var networkClass: [NetworkDeviceClass] = []
    /// The host's real-time clock minus its `/proc/uptime`, read once per connection (`date +%s.%N`
    /// between two reads of the uptime): a tick's clock is this plus its uptime, at no process's cost.
    public var clockBase: Double?

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

    /// True for macOS (and any other Darwin) hosts.
    public var isDarwin: Bool { os.family == "darwin" }

    /// The detection script: os-release, `uname -snrm`, `sw_vers` (macOS has no os-release),
    /// which userland provides `ps`, sysstat, the page size and the local accounts.
    ///
    /// It runs once per connection, so every process it starts is paid by every host on every
    /// connect (about 0.8 ms of the host's CPU each, a cold snapshot's whole host cost being ~35 ms):
    /// - os-release, a few hundred bytes, is read by the shell itself rather than by `cat`.
    /// - The page size of x86 (32 and 64 bit) is 4096 whatever the kernel; `getconf PAGESIZE` runs
    ///   only on other machines (ARM kernels use 4, 16 or 64 KiB). Minimal hosts lack `getconf`;
    ///   the kernel's page size is then read from the `KernelPageSize` line of `/proc/self/smaps`.
    /// - `sw_vers` runs only where `uname` says Darwin (a command that is not there still costs a
    ///   `fork`).
    /// - BusyBox is recognised by its `ps`: the file `ps` runs (a link to the `busybox` binary, or a
    ///   hard link) holds BusyBox's `BusyBox v1.x` banner. A BusyBox binary that merely sits beside
    ///   procps does not count. The `grep -q` over the binary runs only when `ps` is a symbolic link
    ///   or a `busybox` is on the PATH (a hard-link install has both); a host with neither, most of
    ///   them, is spared reading its `ps`.
    /// - `/etc/passwd` is read by `cat`: a shell's `read` takes a byte per system call, which a
    ///   directory of thousands of accounts would make slower than starting `cat`.
    public static let detectionCommand =
        "export LC_ALL=C LANG=C; echo @@os; for f in /etc/os-release /usr/lib/os-release; do if [ -r \"$f\" ]; then "
        + "while IFS= read -r l || [ -n \"$l\" ]; do printf '%s\\n' \"$l\"; done <\"$f\"; break; fi; done; "
        + "u=$(uname -snrm); printf '%s\\n' \"$u\"; echo @@sw_vers; case $u in Darwin*) sw_vers 2>/dev/null ;; esac; "
        + "echo @@ps; p=$(command -v ps); echo \"$p\"; if [ -h \"$p\" ] || command -v busybox >/dev/null 2>&1; then "
        + "grep -q 'BusyBox v' \"$p\" 2>/dev/null && echo BusyBox; fi; "
        + "echo @@sysstat; command -v mpstat 2>/dev/null; "
        + "echo @@pagesize; case $u in *' x86_64' | *' i'[3-6]86) echo 4096 ;; "
        + "*) getconf PAGESIZE 2>/dev/null || grep -m 1 KernelPageSize /proc/self/smaps 2>/dev/null ;; esac; "
        + "echo @@passwd; cat /etc/passwd 2>/dev/null; "
        + "echo @@kernel; for k in hostname domainname version; do if read -r l </proc/sys/kernel/$k; then "
        + "printf '%s=%s\\n' \"$k\" \"$l\"; fi; done 2>/dev/null; "
        + "echo @@clock; case $u in Linux*) read -r a _ </proc/uptime; date +%s.%N; read -r b _ </proc/uptime; "
        + "echo \"$a $b\" ;; esac; "
        + "echo @@netclass; case $u in Linux*) grep -sH '' \(netClassFiles) 2>/dev/null ;; esac; echo @@end"

    /// The `/sys/class/net` attributes read once per connection (the ones that change are read every
    /// tick, ``LinuxProcProbe/nodeFiles``). One grep for them all; a file the kernel refuses (`speed`
    /// of a link that is down: `EINVAL`) prints nothing.
    static let netClassFiles = [
        "address", "addr_assign_type", "broadcast", "carrier", "dev_id", "dormant", "duplex", "flags", "ifalias",
        "ifindex",
        "iflink", "link_mode", "mtu", "name_assign_type", "netdev_group", "speed", "tx_queue_len", "type",
    ].map { "/sys/class/net/*/\($0)" }.joined(separator: " ")

    /// Reads the detection script's output.
    public static func parse(_ output: ProbeOutput) throws(ParseError) -> HostPlatform {
        guard output.isComplete, let osText = output.section("os") else {
            throw ParseError(source: "platform detection", message: "the detection script did not complete")
        }
        var os = try OSReleaseParser.parse(osText)
        if os.name == nil, let product = SwVersParser.productName(output.section("sw_vers") ?? "") {
            os.name = product
        }
        let psText = output.section("ps") ?? ""
        let busyBox = psText.range(of: "busybox", options: .caseInsensitive) != nil
        let sysstat = !(output.section("sysstat") ?? "").trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
        var names: [UInt32: String] = [:]
        for line in (output.section("passwd") ?? "").split(separator: "\n") {
            let fields = line.split(separator: ":", omittingEmptySubsequences: false)
            guard fields.count >= 3, let uid = UInt32(fields[2]), names[uid] == nil else { continue }
            names[uid] = String(fields[0])
        }
        for line in (output.section("kernel") ?? "").split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            let value = String(line[line.index(after: equals)...])
            switch line[..<equals] {
            case "hostname": os.nodename = value
            case "domainname": os.domainname = value
            case "version": os.kernelVersion = value
            default: break
            }
        }
        var platform = HostPlatform(
            os: os, isBusyBox: busyBox, hasSysstat: sysstat,
            pageSize: pageSize(output.section("pagesize") ?? "") ?? 4096, userNames: names)
        platform.networkClass = NetClassParser.parse(output.section("netclass") ?? "")
        platform.clockBase = clockBase(output.section("clock") ?? "")
        return platform
    }

    /// `date +%s.%N` then the two uptimes read around it → the clock minus the uptime; nil where
    /// either is missing (no `/proc`, a `date` without `%N`).
    static func clockBase(_ text: String) -> Double? {
        let lines = TextScanning.lines(text)
        guard lines.count >= 2, let now = Double(lines[0]), now.isFinite else { return nil }
        let uptimes = TextScanning.fields(lines[1]).compactMap { Double($0) }
        guard uptimes.count == 2 else { return nil }
        return now - (uptimes[0] + uptimes[1]) / 2
    }

    /// `getconf PAGESIZE` (`4096`) or smaps' `KernelPageSize:        4 kB`.
    static func pageSize(_ text: String) -> UInt64? {
        let fields = TextScanning.fields(text.trimmingCharacters(in: .whitespacesAndNewlines))
        if fields.count == 1 { return UInt64(fields[0]) }
        if fields.count == 3, fields[0] == "KernelPageSize:", let kib = UInt64(fields[1]), fields[2] == "kB" {
            return kib * 1024
        }
        return nil
    }
}
