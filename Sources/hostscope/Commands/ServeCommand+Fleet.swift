import ArgumentParser
import FleetConfig
import HostscopeCore
import TerminalUI

extension ServeCommand {
    func run() async throws {
        guard let path = sources.fleet.fleetFile else { return try await runResolved(fleetFile: nil) }
        let file: FleetFile
        do {
            file = try FleetFile.read(at: path)
        } catch {
            throw Output.fail(error.message, .usage)
        }
        try await withFleetFile(file).runResolved(fleetFile: file, flagged: flaggedServeKeys())
    }

    /// The `serve:` keys of a fleet file that this command's flags give (they win over the file, at start and
    /// on reload).
    func flaggedServeKeys() -> Set<String> {
        var keys: Set<String> = []
        if listen != nil { keys.insert("listen") }
        if tokenFile != nil { keys.insert("token_file") }
        if tlsCertificate != nil || tlsKey != nil { keys.formUnion(["tls_cert", "tls_key"]) }
        if watchOptions.database != nil { keys.insert("history.path") }
        if watchOptions.retain != nil { keys.insert("history.retain") }
        if watchOptions.noHistory { keys.formUnion(["history.enabled", "history.path", "history.retain"]) }
        if tracing.otlpEndpoint != nil { keys.insert("otlp.endpoint") }
        if !tracing.otlpHeaders.isEmpty { keys.insert("otlp.headers_file") }
        if watchOptions.rules != nil || watchOptions.noAlerts { keys.insert("rules") }
        if !watchOptions.alertmanagers.isEmpty || watchOptions.noAlerts { keys.insert("alertmanager") }
        if watchOptions.alertmanagerHeaders != nil { keys.insert("alertmanager_headers_file") }
        if !filesRoots.isEmpty { keys.insert("files_root") }
        return keys
    }

    /// This command with the fleet file's `serve:` settings where no flag gave them: flags win.
    func withFleetFile(_ file: FleetFile) -> ServeCommand {
        let serve = file.serve
        var command = self
        command.listen = listen ?? serve.listen
        command.tokenFile = tokenFile ?? serve.tokenFile
        if tlsCertificate == nil, tlsKey == nil {
            command.tlsCertificate = serve.tlsCertificate
            command.tlsKey = serve.tlsKey
        }
        command.watchOptions.database = watchOptions.database ?? serve.historyPath
        command.watchOptions.retain = watchOptions.retain ?? serve.historyRetention.map(DurationArgument.init)
        if serve.historyEnabled == false { command.watchOptions.noHistory = true }
        command.tracing.otlpEndpoint = tracing.otlpEndpoint ?? serve.otlpEndpoint
        if tracing.otlpHeaders.isEmpty, let headers = serve.otlpHeadersFile {
            command.tracing.otlpHeaders = ["@" + headers]
        }
        // Alerts: the file's rules unless --rules or --no-alerts said otherwise; its Alertmanagers unless
        // --alertmanager named any.
        if watchOptions.rules == nil, !watchOptions.noAlerts { command.watchOptions.rules = serve.rules }
        if watchOptions.alertmanagers.isEmpty, !watchOptions.noAlerts {
            command.watchOptions.alertmanagers = serve.alertmanagers
            command.watchOptions.alertmanagerHeaders =
                serve.alertmanagers.isEmpty ? nil : watchOptions.alertmanagerHeaders ?? serve.alertmanagerHeadersFile
        }
        if filesRoots.isEmpty { command.filesRoots = serve.filesRoots }
        return command
    }
}
