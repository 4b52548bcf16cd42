import AgentTracing
import Foundation
import HostscopeCore
import OrderedJSON
import Storage
import ValueFormats

/// What hostscope recorded: its stored spans (`find_spans`) and one trace as a tree (`get_trace`), so an agent can
/// see what its calls did on the hosts. Neither reaches a host.
enum TraceTools {
    static func register(_ environment: MCPEnvironment) -> [MCPTool] {
        [findSpans(environment), getTrace(environment)]
    }

    /// A span as both tools give it.
    static let spanSchema = Schema.object(
        [
            "trace_id": Schema.string("32 hex digits"),
            "span_id": Schema.string("16 hex digits"),
            "parent_span_id": Schema.nullable("string", "the parent span, if any"),
            "name": Schema.string("e.g. ssh exec, files.read, tools/call host_snapshot"),
            "kind": Schema.string("server, client or internal"),
            "start": Schema.string("when it started (RFC 3339)"),
            "duration_ms": .object(["type": "number", "description": "how long it took"]),
            "status": .object(["type": "string", "enum": ["unset", "ok", "error"], "description": "its status"]),
            "host": Schema.nullable("string", "the host it concerned"),
        ],
        required: ["trace_id", "span_id", "parent_span_id", "name", "kind", "start", "duration_ms", "status", "host"])

    // MARK: - find_spans

    static func findSpans(_ environment: MCPEnvironment) -> MCPTool {
        MCPTool(
            name: "find_spans", title: "Find spans",
            description: "hostscope's stored spans, newest first: every command's SSH and SFTP work, collections, "
                + "chat and MCP tool calls. Filter by host, by tool (the execute_tool spans of one tool), by error "
                + "status and by age. Give a trace_id to get_trace for the whole tree. Reads only the database.",
            inputSchema: Schema.object([
                "host": Schema.string("only spans about this host", maxLength: 1024),
                "tool": Schema.string("only calls of this tool, e.g. grep", maxLength: 128),
                "errors_only": Schema.boolean("only spans with error status (default false)"),
                "minutes": Schema.integer(1, 525_600, "only spans started this recently (default: any age)"),
                "limit": Schema.integer(1, 200, "the most spans to return (default 20)"),
            ]),
            outputSchema: Schema.result(
                [
                    "spans": Schema.array(of: spanSchema, "newest first"),
                    "has_more": Schema.boolean("whether more spans match than returned"),
                ], required: ["spans", "has_more"]),
            reachesHost: false
        ) { arguments, _ in
            let limit = arguments["limit"]?.intValue ?? 20
            let since = arguments["minutes"]?.intValue.map { Date().addingTimeInterval(-Double($0) * 60) }
            let found: RecentSpans
            do {
                found = try await environment.traces.recent(
                    since: since, host: arguments["host"]?.stringValue,
                    errorsOnly: arguments["errors_only"]?.boolValue
                        ?? false, tool: arguments["tool"]?.stringValue, limit: limit + 1)
            } catch let error as CoreError {
                if error.code == .notFound { return .structured(["spans": [], "has_more": false, "truncated": false]) }
                throw MCPToolFailure(error.message)
            }
            let hasMore = found.spans.count > limit
            var result: JSONObject = [
                "spans": .array(found.spans.prefix(limit).map(describe)), "has_more": .bool(hasMore),
                "truncated": .bool(hasMore),
            ]
            if hasMore { result.append("note", "truncated: ask for less with minutes, host, tool or errors_only") }
            return .structured(result)
        }
    }

    static func describe(_ span: StoredSpan) -> JSONValue {
        .object([
            "trace_id": .string(span.traceID), "span_id": .string(span.spanID),
            "parent_span_id": JSONValue.from(span.parentSpanID) { .string($0) }, "name": .string(span.name),
            "kind": .string(span.kind),
            "start": .string(RFC3339.format(nanosecondsSince1970: UInt64(max(0, span.startUnixNano)))),
            "duration_ms": .number(Double(max(0, span.endUnixNano - span.startUnixNano)) / 1_000_000),
            "status": .string(["unset", "ok", "error"][span.statusCode.rawValue]),
            "host": JSONValue.from(span.host) { .string($0) },
        ])
    }

    // MARK: - get_trace

    /// The most spans `get_trace` returns.
    static let maxSpans = 500

    static func getTrace(_ environment: MCPEnvironment) -> MCPTool {
        var node: JSONObject = ["depth": Schema.integer(0, Int.max, "how deep in the tree (0 for a root)")]
        for (key, value) in spanSchema["properties"]?.objectValue ?? [:] { node.append(key, value) }
        node.append("error", Schema.nullable("string", "the status message when it failed"))
        return MCPTool(
            name: "get_trace", title: "Get a trace",
            description: "One stored trace as a tree, depth first: the span named by an id (a trace id, a span id "
                + "or a unique prefix of either) and every span of its trace, with durations, hosts and errors. "
                + "Reads only the database.",
            inputSchema: Schema.object(
                [
                    "id": .object([
                        "type": "string", "pattern": "^[0-9a-fA-F]{4,32}$",
                        "description": "a trace id, a span id or a unique prefix (4 hex digits or more)",
                    ]),
                    "limit": Schema.integer(1, maxSpans, "the most spans to return (default 200)"),
                ], required: ["id"]),
            outputSchema: Schema.result(
                [
                    "trace_id": Schema.string("32 hex digits"),
                    "span_count": Schema.integer(0, Int.max, "spans in the trace"),
                    "spans": Schema.array(
                        of: Schema.object(
                            node,
                            required: ["depth"] + (spanSchema["required"]?.arrayValue ?? []).compactMap(\.stringValue)
                                + ["error"]),
                        "depth first, parents before children"),
                ], required: ["trace_id", "span_count", "spans"]),
            reachesHost: false
        ) { arguments, _ in
            let id = arguments["id"]?.stringValue ?? ""
            let limit = arguments["limit"]?.intValue ?? 200
            let whole: WholeTrace
            do {
                switch try await environment.traces.show(id) {
                case .trace(let trace): whole = trace
                case .span(let span): whole = try await environment.traces.trace(span.tree.focus.span.traceID.hex)
                }
            } catch {
                throw MCPToolFailure((error as? CoreError)?.message ?? "\(error)")
            }
            var lines: [JSONValue] = []
            var count = 0
            func walk(_ nodes: [TraceTree.Node], depth: Int) {
                for node in nodes {
                    count += 1
                    if lines.count < limit { lines.append(describe(node.span, depth: depth)) }
                    walk(node.children, depth: depth + 1)
                }
            }
            walk(whole.forest, depth: 0)
            var result: JSONObject = [
                "trace_id": .string(whole.summary.traceID.hex), "span_count": .number(count),
                "spans": .array(lines), "truncated": .bool(count > lines.count),
            ]
            if count > lines.count {
                result.append("note", .string("truncated: ask for less with find_spans on one host or tool"))
            }
            return .structured(result)
        }
    }

    static func describe(_ span: FinishedSpan, depth: Int) -> JSONValue {
        .object([
            "depth": .number(depth), "trace_id": .string(span.traceID.hex), "span_id": .string(span.spanID.hex),
            "parent_span_id": JSONValue.from(span.parentSpanID) { .string($0.hex) }, "name": .string(span.name),
            "kind": .string(span.kind.name),
            "start": .string(RFC3339.format(nanosecondsSince1970: span.startNanoseconds)),
            "duration_ms": .number(span.durationMilliseconds), "status": .string(span.status.code.name),
            "host": JSONValue.from(span.attributes["hostscope.host"]?.stringValue) { .string($0) },
            "error": JSONValue.from(span.status.code == .error ? span.status.message : nil) { .string($0) },
        ])
    }
}
