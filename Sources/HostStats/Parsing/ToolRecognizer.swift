/// Guesses which tool printed a text, so that a parser handed the wrong output can say what it
/// got instead of just what it missed.
///
/// The marks are deliberately specific (headers and labels that only one tool prints); a text
/// that matches none is reported as unrecognised rather than guessed at.
public enum ToolRecognizer {
    /// The registry name (`free`, `proc-meminfo`, …) of the tool whose output `text` resembles.
    public static func recognize(_ text: String) -> String? {
        let head = String(text.prefix(4096))
        let lines = TextScanning.lines(head).map { $0.trimmingLeadingBlanks() }
        func anyLine(_ predicate: (Substring) -> Bool) -> Bool { lines.contains(where: predicate) }
        if head.contains("Mach Virtual Memory Statistics") { return "vm_stat" }
        if anyLine({ $0.hasPrefix("ProductName:") }) && anyLine({ $0.hasPrefix("ProductVersion:") }) {
            return "sw_vers"
        }
        if anyLine({ $0.hasPrefix("MemTotal:") }) { return "proc-meminfo" }
        if anyLine({ $0.hasPrefix("cpu ") }) && anyLine({ $0.hasPrefix("ctxt ") || $0.hasPrefix("intr ") }) {
            return "proc-stat"
        }
        if head.hasPrefix("Inter-|") || anyLine({ $0.hasPrefix("face |") }) { return "proc-net-dev" }
        if anyLine({ $0.hasPrefix("PRETTY_NAME=") || $0.hasPrefix("ID=") }) { return "os-release" }
        if head.contains("\"sysstat\"") { return "mpstat" }
        if anyLine({ $0.contains("%idle") && ($0.contains("%usr") || $0.contains("%user")) && $0.contains("CPU") }) {
            return anyLine({ $0.hasPrefix("Device") }) ? "iostat" : "mpstat"
        }
        if anyLine({ $0.hasPrefix("Device") && ($0.contains("r/s") || $0.contains("tps")) }) { return "iostat" }
        if anyLine({ $0.hasPrefix("Tasks:") || $0.hasPrefix("%Cpu(s):") || $0.hasPrefix("Cpu(s):") })
            || (anyLine({ $0.hasPrefix("top - ") })) || anyLine({ $0.hasPrefix("Mem:") && $0.contains(" used,") })
        {
            return "top"
        }
        if anyLine({ $0.hasPrefix("Processes:") }) && anyLine({ $0.hasPrefix("PhysMem:") }) { return "top" }
        if anyLine({ $0.hasPrefix("Mem:") || $0.hasPrefix("Speicher:") }) { return "free" }
        if anyLine({ ($0.hasPrefix("Filesystem") || $0.hasPrefix("Dateisystem")) && $0.contains("Mounted on") })
            || anyLine({ $0.contains("Mounted on") || $0.contains("Eingehängt auf") })
        {
            return "df"
        }
        if anyLine({ $0.hasPrefix("Name") && $0.contains("Mtu") && $0.contains("Network") }) { return "netstat" }
        if anyLine({ $0.contains("link/ether") || $0.contains("link/loopback") }) { return "ip" }
        if anyLine({ $0.hasPrefix("PID") || $0.hasPrefix("USER") || $0.hasPrefix("UID") })
            && anyLine({ $0.contains("CMD") || $0.contains("COMMAND") || $0.contains("ARGS") })
        {
            return "ps"
        }
        if anyLine({ $0.contains(" up ") && $0.contains("load average") }) { return "uptime" }
        if anyLine({ $0.hasPrefix("hw.") || $0.hasPrefix("vm.") || $0.hasPrefix("kern.") }) { return "sysctl" }
        if let first = lines.first {
            let fields = TextScanning.fields(first)
            if fields.count == 5, fields[3].contains("/"), fields.prefix(3).allSatisfy({ Double($0) != nil }) {
                return "proc-loadavg"
            }
            if fields.count == 2, fields.allSatisfy({ Double($0) != nil }), lines.count == 1 { return "proc-uptime" }
            if fields.count >= 14, Int(fields[0]) != nil, Int(fields[1]) != nil, Int(fields[2]) == nil {
                return "proc-diskstats"
            }
            if fields.count > 20, Int(fields[0]) != nil, fields[1].hasPrefix("(") { return "proc-pid-stat" }
        }
        return nil
    }

    /// How a user would type the tool that printed a registry name's output.
    static func displayName(_ name: String) -> String {
        switch name {
        case "proc-meminfo": "/proc/meminfo"
        case "proc-stat": "/proc/stat"
        case "proc-net-dev": "/proc/net/dev"
        case "proc-diskstats": "/proc/diskstats"
        case "proc-loadavg": "/proc/loadavg"
        case "proc-uptime": "/proc/uptime"
        case "proc-pid-stat": "/proc/PID/stat"
        case "os-release": "/etc/os-release"
        default: name
        }
    }
}

extension Substring {
    /// The text without leading ASCII spaces and tabs.
    func trimmingLeadingBlanks() -> Substring {
        drop(while: { $0 == " " || $0 == "\t" })
    }

    /// The text without leading and trailing ASCII spaces and tabs.
    func trimmingBlanks() -> Substring {
        var result = trimmingLeadingBlanks()
        while let last = result.last, last == " " || last == "\t" { result = result.dropLast() }
        return result
    }
}
