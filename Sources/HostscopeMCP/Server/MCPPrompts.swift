import MCP

/// The prompts: walks through the tools for three common questions about a host.
enum MCPPrompts {
    static let host = Prompt.Argument(
        name: "host", title: "Host", description: "the host to look at (one list_hosts names)", required: true)

    static let all = [
        Prompt(
            name: "host_health_summary", title: "Host health summary",
            description: "Summarise a host's health: load, CPU, memory, disks, network and the busiest processes, "
                + "now and over the last hour", arguments: [host]),
        Prompt(
            name: "disk_space_investigation", title: "Disk space investigation",
            description: "Find what fills a host's disks: the fullest filesystems, then the largest and newest files",
            arguments: [
                host,
                Prompt.Argument(
                    name: "path", title: "Path", description: "where to start looking (default: the fullest mount)",
                    required: false),
            ]),
        Prompt(
            name: "slow_host", title: "Why is this host slow?",
            description: "Walk through CPU, memory pressure, I/O and the top processes to find why a host is slow",
            arguments: [host]),
    ]

    static func get(_ name: String, arguments: [String: String]) throws -> GetPrompt.Result {
        guard let prompt = all.first(where: { $0.name == name }) else {
            throw MCPError.invalidParams(
                "there is no prompt named \(name); prompts/list lists \(all.map(\.name).joined(separator: ", "))")
        }
        guard let host = arguments["host"], !host.isEmpty else {
            throw MCPError.invalidParams("the prompt \(name) needs a host argument; list_hosts names the hosts")
        }
        let text: String
        switch name {
        case "host_health_summary":
            text = """
                Summarise the health of the host \(host) using hostscope's read-only tools.
                1. Call host_snapshot with host "\(host)" for load, CPU shares, memory, filesystems and network.
                2. Call host_history with host "\(host)" and minutes 60 to see whether the figures are rising.
                3. Call top_processes with host "\(host)" if CPU or memory is high.
                Answer with a short verdict (healthy, degraded or failing), then one line per area with the figures \
                that support it, and what to look at next.
                """
        case "disk_space_investigation":
            let start = arguments["path"].map { "the path \($0)" } ?? "the fullest filesystem's mount point"
            text = """
                Find out what is filling the disks of the host \(host) using hostscope's read-only tools.
                1. Call disk_usage with host "\(host)" to see each filesystem's use and inode use.
                2. Starting at \(start), call find_files with host "\(host)", a small max_depth and type "file" \
                to find large or recently modified files; list_dir shows sizes in one directory.
                3. For logs that grow, call tail_log to see what is being written.
                Report the filesystems above 80 % use, the directories and files that take the most space, and \
                what could safely be cleaned up (hostscope changes nothing itself).
                """
        default:
            text = """
                Find out why the host \(host) is slow, using hostscope's read-only tools, in this order:
                1. CPU: call host_snapshot with host "\(host)": load against CPU count, user, system, iowait and \
                steal shares.
                2. Memory pressure: in the same snapshot, available memory, swap use and pressure figures.
                3. I/O: disk read and write rates and filesystems near full.
                4. Processes: call top_processes with host "\(host)", sort_by "cpu" and then "memory".
                5. Trend: call host_history with host "\(host)" to see when it started.
                Name the most likely cause first, with the figures that show it, then the other candidates.
                """
        }
        return GetPrompt.Result(description: prompt.description, messages: [.user(.text(text: text))])
    }
}
