import Chat
import Foundation
import HostStats
import HostscopeCore
import MCP
import OrderedJSON

/// The resources: the host list (`hostscope://hosts`) and the latest snapshot of each host
/// (`hostscope://hosts/{host}/snapshot`, a template: read on demand through the same probe as `host_snapshot`).
struct MCPResources: Sendable {
    let environment: MCPEnvironment

    static let hostList = "hostscope://hosts"
    static let snapshotTemplate = "hostscope://hosts/{host}/snapshot"
    /// The most snapshot resources listed (every allowed host stays readable through the template).
    static let maxListed = 100

    func list() -> ListResources.Result {
        var resources = [
            Resource(
                name: "hosts", uri: Self.hostList, title: "Hosts",
                description: "The hosts this server may reach, as list_hosts gives them", mimeType: "application/json")
        ]
        for host in environment.hostNames.prefix(Self.maxListed) {
            resources.append(
                Resource(
                    name: "\(host) snapshot", uri: Self.snapshotURI(host), title: "\(host): snapshot",
                    description: "A snapshot of \(host) taken when read", mimeType: "application/json"))
        }
        return ListResources.Result(resources: resources)
    }

    func templates() -> ListResourceTemplates.Result {
        ListResourceTemplates.Result(templates: [
            Resource.Template(
                uriTemplate: Self.snapshotTemplate, name: "host snapshot", title: "Host snapshot",
                description: "A snapshot of a host this server may reach, taken when read (hostscope's snapshot JSON)",
                mimeType: "application/json")
        ])
    }

    func read(_ uri: String) async throws -> ReadResource.Result {
        if uri == Self.hostList {
            let tool = FleetTools.listHosts(environment)
            guard case .structured(let hosts) = try await tool.handler(.object(["limit": 1000]), MCPToolCall(id: ""))
            else {
                throw MCPError.internalError("the host list could not be read")
            }
            return ReadResource.Result(contents: [
                .text(JSONValue.object(hosts).jsonString, uri: uri, mimeType: "application/json")
            ])
        }
        let host = try snapshotHost(uri)
        if let snapshot = environment.watchedSnapshot(of: host) {
            return ReadResource.Result(contents: [
                .text(snapshot.jsonValue.jsonString, uri: uri, mimeType: "application/json")
            ])
        }
        let output = try await environment.tools(for: host).execute(
            name: "host_snapshot", input: .object([:]), context: ToolContext(callID: "", span: nil))
        guard !output.isError else { throw MCPError.internalError(output.text) }
        return ReadResource.Result(contents: [.text(output.text, uri: uri, mimeType: "application/json")])
    }

    /// The host of a snapshot resource's URI, if the server may reach it.
    ///
    /// - Throws: `MCPError.invalidParams` for another URI or a host outside the set.
    func snapshotHost(_ uri: String) throws -> ResolvedHost {
        guard let name = Self.snapshotHostName(uri) else {
            throw MCPError.invalidParams(
                "there is no resource \(uri); read \(Self.hostList) or \(Self.snapshotTemplate)")
        }
        do {
            return try environment.host(named: name)
        } catch {
            throw MCPError.invalidParams(error.message)
        }
    }

    /// The host name in a snapshot resource's URI (`hostscope://hosts/{host}/snapshot`), or `nil`.
    static func snapshotHostName(_ uri: String) -> String? {
        let prefix = "hostscope://hosts/"
        let suffix = "/snapshot"
        guard uri.hasPrefix(prefix), uri.hasSuffix(suffix), uri.count > prefix.count + suffix.count else { return nil }
        return String(uri.dropFirst(prefix.count).dropLast(suffix.count)).removingPercentEncoding
    }

    static func snapshotURI(_ host: String) -> String {
        "hostscope://hosts/\(host.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? host)/snapshot"
    }
}
