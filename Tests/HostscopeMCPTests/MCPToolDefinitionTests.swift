import HostscopeCore
import HostscopeMCP
import MCP
import OrderedJSON
import TestSupport
import Testing

/// The tools as clients list them: every one annotated, titled and closed, and their schemas as golden files
/// (`HOSTSCOPE_RECORD_GOLDENS=1` rewrites them; review the diff, since clients and models read them).
struct MCPToolDefinitionTests {
    static let configuration = MCPConfiguration(
        fleet: ResolvedFleet(hosts: [.local]), root: nil, settings: CoreSettings(storesHistory: false))

    static let tools = MCPServer.tools(configuration)

    @Test func theServerOffersTheChatsHostToolsAndItsOwn() {
        #expect(
            Self.tools.map(\.name) == [
                "list_hosts", "host_history", "host_snapshot", "top_processes", "disk_usage", "list_dir", "read_file",
                "grep", "tail_log", "find_files", "find_spans", "get_trace", "list_alerts",
            ])
    }

    /// Fails when any tool lacks an annotation: a client decides from them whether to ask before calling.
    @Test(arguments: MCPToolDefinitionTests.tools.map(\.name))
    func everyToolIsAnnotatedReadOnly(_ name: String) throws {
        let tool = try #require(Self.tools.first { $0.name == name })
        let definition = tool.definition
        let annotations = definition.annotations
        #expect(annotations.readOnlyHint == true)
        #expect(annotations.destructiveHint == false)
        #expect(annotations.idempotentHint == true)
        #expect(annotations.openWorldHint == tool.reachesHost)
        #expect(definition.title?.isEmpty == false)
        #expect(definition.description?.isEmpty == false)
        // What the protocol sends, not only what the tool holds.
        let sent = MCPValues.json(try Value(definition))
        #expect(sent["annotations"]?["readOnlyHint"] == true)
        #expect(sent["annotations"]?["destructiveHint"] == false)
        #expect(sent["annotations"]?["idempotentHint"] == true)
        #expect(sent["annotations"]?["openWorldHint"]?.boolValue == tool.reachesHost)
        #expect(sent["inputSchema"]?["additionalProperties"] == false)
        #expect(sent["outputSchema"]?["additionalProperties"] == false)
        #expect(sent["outputSchema"]?["properties"]?["truncated"] != nil)
    }

    /// Host tools reach a host; the database tools do not.
    @Test func openWorldOnlyWhereAHostIsReached() {
        let open = Self.tools.filter(\.reachesHost).map(\.name)
        #expect(
            open == [
                "host_snapshot", "top_processes", "disk_usage", "list_dir", "read_file", "grep", "tail_log",
                "find_files",
            ])
    }

    @Test(arguments: MCPToolDefinitionTests.tools.map(\.name))
    func schemaMatchesItsGolden(_ name: String) throws {
        let tool = try #require(Self.tools.first { $0.name == name })
        let text = JSONWriter(pretty: true).string(tool.definitionJSON) + "\n"
        #expect(text == (try golden("mcp/tools/\(name).json", recording: text)))
    }
}
