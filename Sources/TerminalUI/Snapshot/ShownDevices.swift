public import HostStats

/// The filesystems and network interfaces a table shows, as `df -x tmpfs` and btop do: the real ones, the
/// fullest filesystem first; pseudo filesystems (memory, kernel and container layers) and the loopback and
/// virtual interfaces only when asked for everything (`--all`), and then after the real ones. Only what is
/// shown is chosen here: the JSON, CSV and history keep every entry.
public enum ShownDevices {
    /// Filesystem types that hold no data of a disk: memory, the kernel's views, container layers.
    public static let pseudoFilesystemTypes: Set<String> = [
        "tmpfs", "devtmpfs", "devfs", "ramfs", "proc", "sysfs", "devpts", "cgroup", "cgroup2", "securityfs",
        "debugfs", "tracefs", "pstore", "bpf", "configfs", "fusectl", "hugetlbfs", "mqueue", "efivarfs", "autofs",
        "binfmt_misc", "nsfs", "rpc_pipefs", "overlay", "squashfs", "nullfs", "fuse.lxcfs", "fuse.snapfuse",
    ]

    /// Interfaces that carry no traffic of the host's own: the loopback, and the kernel's placeholder and
    /// redirect devices (`ifb0`, `dummy0`, the fallback tunnels `tunl0`, `sit0`, …).
    public static let virtualInterfacePrefixes = [
        "lo", "ifb", "dummy", "tunl", "sit", "ip6tnl", "ip6gre", "gre", "gretap", "erspan", "ip_vti", "ip6_vti",
        "teql", "gif", "stf",
    ]

    /// Whether `disk` is a pseudo filesystem; the root mount never is (a container's `/` is an overlay).
    public static func isPseudo(_ disk: DiskStats) -> Bool {
        guard disk.mount != "/" else { return false }
        return pseudoFilesystemTypes.contains(disk.type ?? "") || disk.mount == "/dev" || disk.mount.hasPrefix("/dev/")
            || disk.mount.hasPrefix("/proc") || disk.mount.hasPrefix("/sys/")
    }

    /// Whether `interface` is the loopback or a virtual device of the kernel's (by name: `lo`, `ifb0`, `sit0`).
    public static func isVirtual(_ interface: NetworkInterfaceStats) -> Bool {
        let name = interface.interface
        return virtualInterfacePrefixes.contains { prefix in
            name.hasPrefix(prefix) && name.dropFirst(prefix.count).allSatisfy(\.isNumber)
        }
    }

    /// The filesystems to show: the real ones, fullest first; with `all`, the pseudo ones after them.
    public static func disks(_ disks: [DiskStats], all: Bool) -> [DiskStats] {
        let fullestFirst = disks.enumerated().sorted { left, right in
            let (a, b) = (left.element.usedPercent ?? -1, right.element.usedPercent ?? -1)
            return a != b ? a > b : left.offset < right.offset
        }.map(\.element)
        let real = fullestFirst.filter { !isPseudo($0) }
        return all ? real + fullestFirst.filter(isPseudo) : real
    }

    /// The interfaces to show, in the host's order: without `all`, not the loopback nor virtual ones.
    public static func interfaces(_ interfaces: [NetworkInterfaceStats], all: Bool) -> [NetworkInterfaceStats] {
        all ? interfaces.filter { !isVirtual($0) } + interfaces.filter(isVirtual) : interfaces.filter { !isVirtual($0) }
    }

    /// How many entries a table leaves out, as a line under it (`3 pseudo filesystems hidden; --all shows them`),
    /// or `nil` when none is.
    public static func hiddenNote(disks: Int, interfaces: Int) -> String? {
        var parts: [String] = []
        if disks > 0 { parts.append("\(disks) pseudo filesystem\(disks == 1 ? "" : "s")") }
        if interfaces > 0 { parts.append("\(interfaces) virtual interface\(interfaces == 1 ? "" : "s")") }
        guard !parts.isEmpty else { return nil }
        return parts.joined(separator: " and ") + " not shown; --all shows them"
    }
}
