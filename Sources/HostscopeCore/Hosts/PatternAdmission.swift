import SSHTransport

#if canImport(Glibc)
    import Glibc
#endif

/// The rule by which a fleet's patterns admit a host a request names (`serve`'s `/probe`), so that the
/// requester never chooses the address hostscope connects to.
///
/// A name is read as OpenSSH compares it (lower-cased, one trailing dot dropped) and must be a plain host
/// name: labels of letters, digits, `-` and `_`, none empty, none starting or ending with `-`. Then either
/// its ssh_config block sets `HostName` to a fixed address or to `%h` under a fixed domain
/// (`HostName %h.corp.example`), or the name has no more dots than the pattern that selects it (`web-*`
/// admits `web-7`, never `web-7.evil.example`) and is not an IPv4 address in any of the forms the resolver
/// reads (`2130706433`, `0x7f.1`).
public enum PatternAdmission {
    /// `name` as OpenSSH compares it, or `nil` when it is not a plain host name.
    public static func normalized(_ name: String) -> String? {
        var text = name.lowercased()
        if text.hasSuffix(".") { text.removeLast() }
        guard !text.isEmpty, text.utf8.count <= 253 else { return nil }
        for label in text.split(separator: ".", omittingEmptySubsequences: false) {
            guard !label.isEmpty, label.utf8.count <= 63, label.utf8.allSatisfy(isLabelByte),
                label.first != "-", label.last != "-"
            else { return nil }
        }
        return text
    }

    /// The most literal dots of a positive pattern of `patternList` that selects `name` (both compared
    /// without regard to case); `nil` when the list does not select it.
    public static func patternDots(selecting name: String, patternList: String) -> Int? {
        let list = patternList.lowercased()
        guard HostPattern.matches(name, patternList: list) else { return nil }
        return list.split(separator: ",").filter {
            !$0.hasPrefix("!") && HostPattern.matches(name, pattern: String($0))
        }
        .map { $0.utf8.count(where: { $0 == UInt8(ascii: ".") }) }.max()
    }

    /// Whether the address `hostName` (what `name` resolved to through ssh_config, `HostName` applied when
    /// `fromHostName`) stays out of the requester's choice: a fixed `HostName`, or the name under a fixed
    /// domain; else the name may add no dots to its pattern's and must not read as an IPv4 address.
    public static func addressIsFixed(name: String, hostName: String, fromHostName: Bool, patternDots: Int) -> Bool {
        let address = hostName.lowercased()
        if fromHostName, !address.contains(name) { return true }
        if fromHostName, address.hasPrefix(name + "."),
            address.dropFirst(name.utf8.count + 1).split(separator: ".", omittingEmptySubsequences: false)
                .allSatisfy({ !$0.isEmpty })
        {
            return true
        }
        return name.utf8.count(where: { $0 == UInt8(ascii: ".") }) <= patternDots && !readsAsIPv4(name)
    }

    /// Whether the resolver would take `name` for an IPv4 address (`inet_aton`'s forms: `127.1`,
    /// `2130706433`, `0x7f000001`).
    static func readsAsIPv4(_ name: String) -> Bool {
        var address = in_addr()
        return inet_aton(name, &address) != 0
    }

    /// Letters, digits, `-` and `_`.
    static func isLabelByte(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
    }
}
