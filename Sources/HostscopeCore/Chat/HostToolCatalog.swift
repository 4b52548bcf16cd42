public import Chat
import OrderedJSON

/// The definitions of the host tools: names, descriptions for the model, and JSON schemas.
///
/// Every schema is a closed object (`additionalProperties: false`) with bounded strings and numbers, so a call
/// the session lets through is one ``HostTools`` can run as it stands.
public enum HostToolCatalog {
    /// The names of the monitoring tools, which every host offers.
    public static let monitoringTools = ["host_snapshot", "top_processes", "disk_usage"]
    /// The names of the file tools, which need SFTP (an SSH host).
    public static let fileTools = ["list_dir", "read_file", "grep", "tail_log", "find_files"]

    /// The definitions offered for a host, file tools only when it is reached over SSH.
    public static func definitions(fileTools: Bool, limits: HostTools.Limits = HostTools.Limits()) -> [ToolDefinition] {
        var tools = [hostSnapshot, topProcesses, diskUsage]
        if fileTools {
            tools += [listDir(limits), readFile(limits), grep(limits), tailLog, findFiles(limits)]
        }
        return tools
    }

    private static let pathNote =
        "Relative paths start at the workspace root when the user set one (else the login directory); paths "
        + "outside the root are refused."

    static let hostSnapshot = ToolDefinition(
        name: "host_snapshot",
        description: "A snapshot of the host: OS, uptime, load, CPU shares over a short sample, memory, "
            + "filesystems, network interfaces and the ten busiest processes, as hostscope's snapshot JSON "
            + "(sizes in bytes, percentages 0-100). Read-only.",
        inputSchema: object([:]))

    static let topProcesses = ToolDefinition(
        name: "top_processes",
        description: "The processes using the most CPU (measured over a short sample) or memory (resident "
            + "size), with PID, parent, user, CPU %, memory % and command line. Read-only.",
        inputSchema: object([
            "sort_by": .object(["type": "string", "enum": ["cpu", "memory"], "description": "cpu (default) or memory"]),
            "limit": integer(1, 100, "how many processes (default 10)"),
        ]))

    static let diskUsage = ToolDefinition(
        name: "disk_usage",
        description: "Usage of the host's mounted filesystems (size, used, available, use %, inode use), or only "
            + "of the filesystem holding an absolute path. Read-only.",
        inputSchema: object([
            "path": string(4096, "an absolute path; shows only the filesystem that holds it")
        ]))

    static func listDir(_ limits: HostTools.Limits) -> ToolDefinition {
        ToolDefinition(
            name: "list_dir",
            description: "List a directory on the host: type and permissions, size in bytes, modification time "
                + "(UTC) and name, sorted by name. " + pathNote,
            inputSchema: object([
                "path": string(4096, "the directory (default: the root or login directory)"),
                "include_hidden": boolean("include names starting with a dot (default true)"),
                "limit": integer(1, limits.maxEntries, "the most entries to show (default 200)"),
            ]))
    }

    static func readFile(_ limits: HostTools.Limits) -> ToolDefinition {
        ToolDefinition(
            name: "read_file",
            description: "Read a text file on the host, at most max_bytes from offset; says when the file goes on. "
                + "Binary files are described, not shown. " + pathNote,
            inputSchema: object(
                [
                    "path": string(4096, "the file"),
                    "offset": integer(0, Int(Int32.max), "the byte to start at (default 0)"),
                    "max_bytes": integer(1, limits.maxReadBytes, "the most bytes to return (default 16384)"),
                ], required: ["path"]))
    }

    static func grep(_ limits: HostTools.Limits) -> ToolDefinition {
        ToolDefinition(
            name: "grep",
            description: "Search files on the host for lines matching a regular expression (POSIX extended) or a "
                + "fixed string, as path:line:text. Searches below a directory unless recursive is false; binary "
                + "files are skipped. " + pathNote,
            inputSchema: object(
                [
                    "pattern": .object([
                        "type": "string", "minLength": 1, "maxLength": 1000, "description": "what to find",
                    ]),
                    "path": string(4096, "a file or directory (default: the root or login directory)"),
                    "recursive": boolean("search below directories (default true)"),
                    "ignore_case": boolean("match case-insensitively (default false)"),
                    "fixed_string": boolean("pattern is plain text (default false)"),
                    "include": string(256, "only files whose name matches this glob, e.g. *.log"),
                    "max_matches": integer(1, limits.maxEntries, "the most lines to return (default 100)"),
                ], required: ["pattern"]))
    }

    static let tailLog = ToolDefinition(
        name: "tail_log",
        description: "The last lines of a log (or any text) file on the host; only the end of the file is read. "
            + pathNote,
        inputSchema: object(
            [
                "path": string(4096, "the file, e.g. /var/log/syslog"),
                "lines": integer(1, 1000, "how many lines (default 50)"),
            ], required: ["path"]))

    static func findFiles(_ limits: HostTools.Limits) -> ToolDefinition {
        ToolDefinition(
            name: "find_files",
            description: "Find files and directories below a directory on the host by name glob, type and "
                + "modification time, with size and modification time; symbolic links are not followed. "
                + pathNote,
            inputSchema: object([
                "path": string(4096, "where to start (default: the root or login directory)"),
                "name": string(256, "a glob the name must match, e.g. *.log"),
                "type": .object([
                    "type": "string", "enum": ["file", "dir", "symlink"], "description": "only this type",
                ]),
                "modified_within_minutes": integer(1, 5_256_000, "only entries modified this recently"),
                "max_depth": integer(0, 64, "how many levels to descend (default: no limit)"),
                "limit": integer(1, limits.maxEntries, "the most entries to return (default 200)"),
            ]))
    }

    // MARK: - Schema pieces

    private static func object(_ properties: JSONObject, required: [String] = []) -> JSONValue {
        var schema: JSONObject = ["type": "object", "properties": .object(properties)]
        if !required.isEmpty { schema.append("required", .array(required.map(JSONValue.string))) }
        schema.append("additionalProperties", false)
        return .object(schema)
    }

    private static func string(_ maxLength: Int, _ description: String) -> JSONValue {
        .object([
            "type": "string", "minLength": 1, "maxLength": .number(maxLength), "description": .string(description),
        ])
    }

    private static func integer(_ minimum: Int, _ maximum: Int, _ description: String) -> JSONValue {
        .object([
            "type": "integer", "minimum": .number(minimum), "maximum": .number(maximum),
            "description": .string(description),
        ])
    }

    private static func boolean(_ description: String) -> JSONValue {
        .object(["type": "boolean", "description": .string(description)])
    }
}
