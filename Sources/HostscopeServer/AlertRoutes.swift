import Alerting
import Foundation
import HostscopeCore
import Hummingbird
import Logging
import OrderedJSON
import ServeAPI

extension ServeRoutes {
    /// `/api/v1/alerts`: the pending and firing alerts now, in the shape of Prometheus's own
    /// (`{"status":"success","data":{"alerts":[…]}}`); an empty list when serve evaluates no rules.
    static func addAlertRoutes(_ router: Router<ServeRequestContext>, _ serve: ServeContext) {
        router.get("/api/v1/alerts") { _, _ in
            let alerts = serve.alerts?.alerts ?? []
            let body = JSONValue.object([
                "status": "success",
                "data": .object(["alerts": .array(alerts.map(AlertJSON.alert))]),
            ])
            return Response.json(body.jsonString + "\n")
        }
    }
}

extension FleetService {
    /// Each alert transition as an `alert` event, and the alerts now as `hostscope_alert` series (the board
    /// reads the engine's alerts when it makes a document after they moved, not on every transition).
    func forwardAlerts() async {
        guard let engine = parts.alerts else { return }
        let board = parts.board
        let transitions = engine.subscribe()
        board.showAlerts { engine.alerts.map { (labels: $0.labels, state: $0.state.rawValue) } }
        for await transition in transitions {
            board.events.append("alert", data: AlertJSON.transition(transition).jsonString)
            board.alertsMoved()
        }
    }

    /// Ends the alerts of hosts no longer watched, so that they leave `/api/v1/alerts` and `/metrics` with them.
    func forgetAlerts(of hosts: Set<String>) {
        guard let engine = parts.alerts, !hosts.isEmpty else { return }
        Task { await engine.removeHosts(hosts) }
    }

    /// Reads the rules file again on SIGHUP (the one the fleet file names now, unless `--rules` gave one): a
    /// file that does not read keeps the rules in force and says why. Without a file, the shipped rules.
    func reloadRules() async {
        guard let engine = parts.alerts else { return }
        let path = live.rulesPath
        guard path != nil || parts.rulesPath != nil else { return }
        do throws(AlertingError) {
            let rules = try path.map { path throws(AlertingError) in try AlertRules.load(path: path) } ?? .defaults
            let ended = await engine.reload(rules)
            logger.info(
                "reloaded the alert rules",
                metadata: ["rules": .stringConvertible(rules.rules.count), "ended": .stringConvertible(ended.count)])
        } catch {
            logger.error(
                "alert rules reload failed; keeping the \(engine.rules.rules.count) rules in force",
                metadata: ["reason": "\(error.message)"])
        }
    }
}
