public import MCP
public import OrderedJSON

/// One tool of the MCP face: what a client lists (name, title, description, closed input schema, output schema,
/// annotations) and the handler that runs when it is called, kept together.
///
/// Every tool only reads, so every one is annotated `readOnlyHint: true`, `destructiveHint: false` and
/// `idempotentHint: true`; `openWorldHint` says whether it reaches a host (the file and monitoring tools) or only
/// hostscope's own database.
public struct MCPTool: Sendable {
    /// The name clients call it by.
    public var name: String
    /// The title a client shows.
    public var title: String
    /// What it does, for the model.
    public var description: String
    /// A closed JSON Schema object (`additionalProperties: false`); arguments are checked against it first.
    public var inputSchema: JSONValue
    /// The JSON Schema of its structured result.
    public var outputSchema: JSONValue
    /// Whether it reaches a host over SSH or SFTP (`openWorldHint`), rather than only the database.
    public var reachesHost: Bool
    /// Runs a call whose arguments passed ``inputSchema``.
    var handler: @Sendable (_ arguments: JSONValue, _ call: MCPToolCall) async throws -> MCPToolResult

    /// The protocol's description of the tool, with its annotations.
    public var definition: Tool {
        Tool(
            name: name, title: title, description: description, inputSchema: MCPValues.value(inputSchema),
            annotations: annotations, outputSchema: MCPValues.value(outputSchema))
    }

    /// Its annotations: read-only, not destructive, idempotent; open world where it reaches a host.
    public var annotations: Tool.Annotations {
        Tool.Annotations(
            title: title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: reachesHost)
    }

    /// The definition as ordered JSON (the golden files of the tool schemas).
    public var definitionJSON: JSONValue {
        .object([
            "name": .string(name), "title": .string(title), "description": .string(description),
            "inputSchema": inputSchema, "outputSchema": outputSchema,
            "annotations": .object([
                "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true,
                "openWorldHint": .bool(reachesHost),
            ]),
        ])
    }
}

/// What a tool's handler hands back: a structured result (sent as `structuredContent` and as the same JSON in a
/// text block), or a failure the model reads (`isError: true`, one sentence).
enum MCPToolResult: Sendable {
    case structured(JSONObject)
    /// A structured result already written as its JSON object, sent as it is (not written a second time).
    case json([UInt8])
    case failure(String)
}

/// A handler's failure with the sentence to show the model; becomes an `isError` result, not a protocol error.
struct MCPToolFailure: Error, CustomStringConvertible {
    var message: String

    init(_ message: String) {
        self.message = message
    }

    var description: String { message }
}

/// What a handler knows about the call it serves.
struct MCPToolCall: Sendable {
    /// The JSON-RPC request id of the call, as text.
    var id: String
}

/// The tool categories, each with the one function that registers its tools: the single table that decides what
/// the server offers.
enum MCPToolTable {
    /// Every category, in the order their tools are listed.
    static let categories: [(name: String, register: @Sendable (MCPEnvironment) -> [MCPTool])] = [
        ("fleet", FleetTools.register),
        ("host", HostToolsCategory.register),
        ("traces", TraceTools.register),
        ("alerts", AlertTools.register),
    ]

    /// The tools the server offers in `environment`.
    static func tools(_ environment: MCPEnvironment) -> [MCPTool] {
        categories.flatMap { $0.register(environment) }
    }
}
