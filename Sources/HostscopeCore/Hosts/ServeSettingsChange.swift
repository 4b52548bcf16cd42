import FleetConfig

/// How a fleet file's `serve:` settings differ between two readings of it, for `serve`'s SIGHUP reload: the
/// keys that changed, and the new values of those a running server can take (`rules`, `history: retain`).
public struct ServeSettingsChange: Sendable, Equatable {
    /// The keys whose value changed, spelled as in the file (`listen`, `history.retain`, `otlp.endpoint`).
    public var changed: [String]
    /// The rules file the new reading names (`nil`: the shipped rules).
    public var rules: String?
    /// How long history is kept by the new reading (`nil`: for ever).
    public var retention: Duration?

    /// The keys that can change while `serve` runs: the others need a restart.
    public static let reloadable: Set<String> = ["rules", "history.retain"]

    /// The difference between the `serve:` of `old` and that of `new` (either without a file: no settings).
    public init(from old: ResolvedFleet, to new: ResolvedFleet) {
        let before = old.file?.serve
        let after = new.file?.serve
        var changed: [String] = []
        func compare<Value: Equatable>(_ key: String, _ value: (FleetServeSettings?) -> Value) {
            if value(before) != value(after) { changed.append(key) }
        }
        compare("listen") { $0?.listen }
        compare("token_file") { $0?.tokenFile }
        compare("tls_cert") { $0?.tlsCertificate }
        compare("tls_key") { $0?.tlsKey }
        compare("history.path") { $0?.historyPath }
        compare("history.retain") { $0?.historyRetention }
        compare("history.enabled") { $0?.historyEnabled }
        compare("otlp.endpoint") { $0?.otlpEndpoint }
        compare("otlp.headers_file") { $0?.otlpHeadersFile }
        compare("rules") { $0?.rules }
        compare("alertmanager") { $0?.alertmanagers ?? [] }
        compare("alertmanager_headers_file") { $0?.alertmanagerHeadersFile }
        compare("files_root") { $0?.filesRoots ?? [] }
        self.changed = changed
        rules = after?.rules
        retention = after?.historyRetention
    }
}
