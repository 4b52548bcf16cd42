import Foundation
import HostscopeCore
import OrderedJSON
import Storage
import ValueFormats

/// The alerts of the fleet (`list_alerts`): under `serve` the ones its rules hold now, under `hostscope mcp` the
/// ones a `watch` or `serve` last stored in the history database. Neither reaches a host.
enum AlertTools {
    static func register(_ environment: MCPEnvironment) -> [MCPTool] {
        [listAlerts(environment)]
    }

    static func listAlerts(_ environment: MCPEnvironment) -> MCPTool {
        let strings: (String) -> JSONValue = { description in
            .object([
                "type": "object", "additionalProperties": .object(["type": "string"]),
                "description": .string(description),
            ])
        }
        let states: [JSONValue] = ["firing", "pending"]
        return MCPTool(
            name: "list_alerts", title: "List alerts",
            description: "The firing and pending alerts of hostscope's rules (firing first): each one's name, host, "
                + "severity, labels (alertname, instance, mountpoint, device…), annotations (summary, description), "
                + "since when it is active and since when it fires, and the figure's value at the last evaluation. "
                + "Under `hostscope serve` these are the alerts now; otherwise the ones a `watch --rules` or `serve` "
                + "last stored in hostscope's database (`source` says which). Filter by host and by state.",
            inputSchema: Schema.object([
                "host": Schema.string("only this host's alerts", maxLength: 1024),
                "state": .object([
                    "type": "string", "enum": .array(states), "description": "only alerts in this state",
                ]),
                "limit": Schema.integer(1, 500, "the most alerts to return (default 50)"),
            ]),
            outputSchema: Schema.result(
                [
                    "alerts": Schema.array(
                        of: Schema.object(
                            [
                                "name": Schema.string("the alert's name (its alertname label)"),
                                "host": Schema.string("the host it is about"),
                                "severity": Schema.string("its severity (critical, warning, info…)"),
                                "state": .object([
                                    "type": "string", "enum": .array(states), "description": "its state",
                                ]),
                                "labels": strings("its labels, by name"),
                                "annotations": strings("its annotations (summary, description…), by name"),
                                "active_at": Schema.string("when its condition first held (RFC 3339)"),
                                "fired_at": Schema.nullable("string", "when it started firing (RFC 3339)"),
                                "value": Schema.nullable("number", "the figure's value at the last evaluation"),
                            ],
                            required: [
                                "name", "host", "severity", "state", "labels", "annotations", "active_at", "fired_at",
                                "value",
                            ]), "firing first, then pending; each oldest first"),
                    "firing": Schema.integer(0, Int.max, "how many alerts fire (within the filter)"),
                    "pending": Schema.integer(0, Int.max, "how many alerts are pending (within the filter)"),
                    "source": .object([
                        "type": "string", "enum": ["serve", "database"],
                        "description": "serve: the alerts now; database: the ones last stored",
                    ]),
                ], required: ["alerts", "firing", "pending", "source"]),
            reachesHost: false
        ) { arguments, _ in
            let host = arguments["host"]?.stringValue
            let state = arguments["state"]?.stringValue
            let limit = arguments["limit"]?.intValue ?? 50
            let all: [StoredAlert]
            if let engine = environment.configuration.alerts {
                all = engine.storedAlerts
            } else {
                do throws(CoreError) {
                    all = try await AlertService(settings: environment.configuration.settings).current()
                } catch  where error.code == .notFound {
                    // No database yet is no alerts, not a failure.
                    all = []
                } catch {
                    throw MCPToolFailure(error.message)
                }
            }
            let chosen = all.filter { alert in
                (host == nil || alert.host == host) && (state == nil || alert.state == state)
            }.sorted { ($0.state == "firing" ? 0 : 1, $0.activeAt) < ($1.state == "firing" ? 0 : 1, $1.activeAt) }
            let hasMore = chosen.count > limit
            var result: JSONObject = [
                "alerts": .array(chosen.prefix(limit).map(json)),
                "firing": .number(chosen.count { $0.state == "firing" }),
                "pending": .number(chosen.count { $0.state == "pending" }),
                "source": environment.configuration.alerts == nil ? "database" : "serve",
                "truncated": .bool(hasMore),
            ]
            if hasMore {
                result.append("note", "truncated: ask for less with host or state, or for more with a larger limit")
            }
            return .structured(result)
        }
    }

    private static func json(_ alert: StoredAlert) -> JSONValue {
        func strings(_ map: [String: String]) -> JSONValue {
            .object(JSONObject(map.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) }))
        }
        return .object([
            "name": .string(alert.name), "host": .string(alert.host), "severity": .string(alert.severity),
            "state": .string(alert.state), "labels": strings(alert.labels), "annotations": strings(alert.annotations),
            "active_at": .string(RFC3339.format(alert.activeAt)),
            "fired_at": JSONValue.from(alert.firedAt) { .string(RFC3339.format($0)) },
            "value": alert.value.isFinite ? .number(alert.value) : .null,
        ])
    }
}
