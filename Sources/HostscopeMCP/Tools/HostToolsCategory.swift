import Chat
import HostStats
import HostscopeCore
import OrderedJSON

/// The chat's read-only host tools (``HostToolCatalog``), each taking a `host` from the allowed set: the snapshot,
/// top processes and disk usage through hostscope's fixed probe, and the file tools (confined to `--root`) over
/// SFTP through the read-only file browser. Nothing a client sends reaches a shell.
enum HostToolsCategory {
    /// The titles clients show.
    static let titles = [
        "host_snapshot": "Host snapshot", "top_processes": "Top processes", "disk_usage": "Disk usage",
        "list_dir": "List a directory", "read_file": "Read a file", "grep": "Search files",
        "tail_log": "Tail a log", "find_files": "Find files",
    ]

    /// How to ask for less when a result was cut.
    static let narrowing = [
        "host_snapshot": "top_processes or disk_usage for one part",
        "top_processes": "a smaller limit",
        "disk_usage": "a path, for the filesystem holding it",
        "list_dir": "a smaller limit, or find_files with a name glob",
        "read_file": "a smaller max_bytes, or an offset to read on from",
        "grep": "a narrower pattern, path or include glob, or a smaller max_matches",
        "tail_log": "fewer lines",
        "find_files": "a name glob, a type, a smaller max_depth or limit",
    ]

    static func register(_ environment: MCPEnvironment) -> [MCPTool] {
        HostToolCatalog.definitions(fileTools: true).map { definition in
            MCPTool(
                name: definition.name, title: titles[definition.name] ?? definition.name,
                description: definition.description, inputSchema: withHost(definition.inputSchema),
                outputSchema: outputSchema(definition.name), reachesHost: true
            ) { arguments, call in
                try await run(definition.name, arguments, call, environment)
            }
        }
    }

    /// The catalog's schema with a required `host` first.
    static func withHost(_ schema: JSONValue) -> JSONValue {
        var properties: JSONObject = [
            "host": Schema.string("the host to ask, one list_hosts names", maxLength: 1024)
        ]
        for (key, value) in schema["properties"]?.objectValue ?? [:] { properties.append(key, value) }
        let required = ["host"] + (schema["required"]?.arrayValue ?? []).compactMap(\.stringValue)
        return Schema.object(properties, required: required)
    }

    static func outputSchema(_ name: String) -> JSONValue {
        var properties: JSONObject = ["host": Schema.string("the host asked")]
        if name == "host_snapshot" {
            properties.append(
                "snapshot", .object(["type": "object", "description": "hostscope's snapshot JSON of the host"]))
        } else {
            properties.append("output", Schema.string("what the tool found, as text"))
        }
        properties.append("exit_code", Schema.nullable("integer", "the probe's exit status (monitoring tools)"))
        return Schema.result(properties, required: ["host", name == "host_snapshot" ? "snapshot" : "output"])
    }

    static func run(
        _ name: String, _ arguments: JSONValue, _ call: MCPToolCall, _ environment: MCPEnvironment
    ) async throws -> MCPToolResult {
        let hostName = arguments["host"]?.stringValue ?? ""
        let host = try environment.host(named: hostName)
        let input = JSONObject((arguments.objectValue ?? [:]).filter { $0.key != "host" }.map { ($0.key, $0.value) })
        // Under serve, the watch's latest record of a watched host answers without new SSH work.
        let limit = environment.configuration.maxResultBytes
        if name == "host_snapshot", let snapshot = environment.watchedSnapshot(of: host) {
            return .json(
                SnapshotBound.json(
                    [
                        "host": .string(host.displayName), "snapshot": snapshot.jsonValue, "exit_code": .null,
                        "truncated": false,
                    ], maxBytes: limit))
        }
        let tools = environment.tools(for: host)
        if name == "host_snapshot" {
            // The snapshot itself, not its JSON text parsed back: one encoding fewer on the warm path.
            let snapshot: Snapshot
            let exitCode: Int?
            do {
                (snapshot, exitCode) = try await tools.snapshot()
            } catch let error as CollectionError {
                throw MCPToolFailure(error.message)
            }
            return .json(
                SnapshotBound.json(
                    [
                        "host": .string(host.displayName), "snapshot": snapshot.jsonValue,
                        "exit_code": JSONValue.from(exitCode) { .number($0) }, "truncated": false,
                    ], maxBytes: limit))
        }
        let output = try await tools.execute(
            name: name, input: .object(input), context: ToolContext(callID: call.id, span: nil))
        guard !output.isError else { throw MCPToolFailure(output.text) }
        // The output is cut until the whole result's JSON (escaping included) fits the bound.
        var kept = output.text.utf8.count
        while true {
            let cut = BoundedText.cut(output.text, maxBytes: kept)
            var result: JSONObject = [
                "host": .string(host.displayName), "output": .string(cut.text),
                "exit_code": JSONValue.from(output.exitCode) { .number($0) }, "truncated": .bool(cut.truncated),
            ]
            if cut.truncated {
                result.append(
                    "note", .string("truncated: ask for less with \(narrowing[name] ?? "narrower arguments")"))
            }
            let size = JSONValue.object(result).jsonString.utf8.count
            if size <= limit || kept == 0 { return .structured(result) }
            kept = max(0, min(kept, cut.text.utf8.count) - (size - limit) - 16)
        }
    }
}

/// A `host_snapshot` result held to the results' bound (its JSON, as every tool's; the answer carries it twice,
/// as structured content and as text): first each process's command line is cut to ``commandBytes`` (a
/// compiler's can be tens of kilobytes), then, while the result is still over, the longest list of the
/// snapshot (processes, filesystems, interfaces…) loses its last quarter, its first entries (the busiest
/// processes, in the snapshot's order) kept. A result cut says so (`truncated`, and a `note` naming the tools
/// that ask for one part).
enum SnapshotBound {
    static let commandBytes = 1024

    /// The result's JSON held to the bound: written once when it fits (a snapshot's usual case), so the answer
    /// splices these bytes in rather than writing the result again.
    static func json(_ result: JSONObject, maxBytes: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        JSONWriter().write(.object(result), into: &bytes)
        guard bytes.count > maxBytes else { return bytes }
        bytes.removeAll(keepingCapacity: true)
        JSONWriter().write(.object(bounded(result, maxBytes: maxBytes)), into: &bytes)
        return bytes
    }

    static func bounded(_ result: JSONObject, maxBytes: Int) -> JSONObject {
        func size(_ value: JSONValue) -> Int { value.jsonString.utf8.count }
        guard size(.object(result)) > maxBytes, var snapshot = result["snapshot"]?.objectValue else { return result }
        var result = result
        result["truncated"] = true
        result["note"] = .string("truncated: ask for less with \(HostToolsCategory.narrowing["host_snapshot"] ?? "")")
        if var processes = snapshot["processes"]?.arrayValue {
            for index in processes.indices {
                guard var process = processes[index].objectValue, let command = process["command"]?.stringValue,
                    command.utf8.count > commandBytes
                else { continue }
                process["command"] = .string(BoundedText.cut(command, maxBytes: commandBytes).text + "…")
                processes[index] = .object(process)
            }
            snapshot["processes"] = .array(processes)
        }
        result["snapshot"] = .object(snapshot)
        while size(.object(result)) > maxBytes {
            let lists = snapshot.compactMap { member -> (key: String, list: [JSONValue], size: Int)? in
                guard let list = member.value.arrayValue, !list.isEmpty else { return nil }
                return (member.key, list, size(member.value))
            }
            guard let longest = lists.max(by: { $0.size < $1.size }) else { break }
            snapshot[longest.key] = .array(Array(longest.list.dropLast(max(1, longest.list.count / 4))))
            result["snapshot"] = .object(snapshot)
        }
        return result
    }
}

/// Text cut to a number of UTF-8 bytes at a character boundary.
enum BoundedText {
    static func cut(_ text: String, maxBytes: Int) -> (text: String, truncated: Bool) {
        let bytes = Array(text.utf8)
        guard bytes.count > maxBytes else { return (text, false) }
        var end = max(0, maxBytes)
        while end > 0, bytes[end] & 0xC0 == 0x80 { end -= 1 }
        return (String(decoding: bytes[..<end], as: UTF8.self), true)
    }
}
