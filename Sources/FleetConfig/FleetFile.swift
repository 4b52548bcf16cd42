/// A fleet file as read (`--fleet FILE`): groups of hosts and ssh_config patterns with their labels and
/// collection settings, and `serve`'s own settings. ``FleetFile/parse(_:path:)`` reads one.
///
/// Nothing here resolves a host or opens a file: the core expands the groups' patterns over ssh_config and
/// reads the files the settings name.
public struct FleetFile: Sendable, Equatable {
    /// The file's path, as given; messages name it.
    public var path: String
    /// What every group inherits (`defaults:`): labels and collection settings.
    public var defaults: FleetSettings
    /// The labels of `defaults:` (every group's hosts start from them).
    public var defaultLabels: [String: String]
    /// The groups, in file order.
    public var groups: [FleetGroup]
    /// `serve:`'s settings.
    public var serve: FleetServeSettings

    public init(
        path: String, defaults: FleetSettings = FleetSettings(), defaultLabels: [String: String] = [:],
        groups: [FleetGroup] = [], serve: FleetServeSettings = FleetServeSettings()
    ) {
        self.path = path
        self.defaults = defaults
        self.defaultLabels = defaultLabels
        self.groups = groups
        self.serve = serve
    }

    /// Every host entry of every group, with its group and its labels (defaults, then the group's, then
    /// the entry's own: the entry wins), in file order.
    public var entries: [FleetEntry] {
        groups.flatMap { group in
            group.hosts.map { host in
                FleetEntry(
                    text: host.text, line: host.line, group: group.name,
                    labels: defaultLabels.merging(group.labels) { $1 }.merging(host.labels) { $1 },
                    settings: group.settings.over(defaults))
            }
        }
    }
}

/// A group of hosts (`groups: NAME:`): its hosts and patterns, labels and collection settings.
public struct FleetGroup: Sendable, Equatable {
    /// The group's name, as written.
    public var name: String
    /// The line of the group's name.
    public var line: Int
    /// Its hosts and ssh_config patterns, in order.
    public var hosts: [FleetHost]
    /// Labels every host of the group gets (a host's own win).
    public var labels: [String: String]
    /// Its collection settings (unset ones come from `defaults:`, then from the command's defaults).
    public var settings: FleetSettings

    public init(
        name: String, line: Int, hosts: [FleetHost], labels: [String: String] = [:],
        settings: FleetSettings = FleetSettings()
    ) {
        self.name = name
        self.line = line
        self.hosts = hosts
        self.labels = labels
        self.settings = settings
    }
}

/// One entry of a group's `hosts:`: a host (`web1`, `me@db1:2222`) or an ssh_config pattern (`'db-*'`), as a
/// hosts file's line would be, with labels of its own.
public struct FleetHost: Sendable, Equatable {
    /// The host or pattern, as written.
    public var text: String
    /// Its line in the file.
    public var line: Int
    /// Its own labels (they win over the group's).
    public var labels: [String: String]

    public init(text: String, line: Int, labels: [String: String] = [:]) {
        self.text = text
        self.line = line
        self.labels = labels
    }
}

/// A host entry with everything its group and the defaults give it (``FleetFile/entries``).
public struct FleetEntry: Sendable, Equatable {
    /// The host or pattern, as written.
    public var text: String
    /// Its line in the file.
    public var line: Int
    /// The group it is in.
    public var group: String
    /// Its labels: the defaults', the group's, then its own.
    public var labels: [String: String]
    /// The group's settings over the defaults'.
    public var settings: FleetSettings
}

/// How a group's hosts are collected; `nil` leaves a setting to `defaults:` or to the command.
public struct FleetSettings: Sendable, Equatable {
    /// Between two ticks of a host (`interval:`, as `--every`).
    public var interval: Duration?
    /// The limit on each probe command (`timeout:`, as `--timeout`).
    public var timeout: Duration?
    /// Processes recorded per snapshot (`top:`, as `--top`).
    public var top: Int?
    /// `auto`, `proc` or `tools` (`collector:`, as `--collector`).
    public var collector: String?
    /// The host's directory of `*.prom` files (`textfile_directory:`, as `--textfile-directory`).
    public var textfileDirectory: String?

    public init(
        interval: Duration? = nil, timeout: Duration? = nil, top: Int? = nil, collector: String? = nil,
        textfileDirectory: String? = nil
    ) {
        self.interval = interval
        self.timeout = timeout
        self.top = top
        self.collector = collector
        self.textfileDirectory = textfileDirectory
    }

    /// These settings, with `base`'s where these leave one unset.
    public func over(_ base: FleetSettings) -> FleetSettings {
        FleetSettings(
            interval: interval ?? base.interval, timeout: timeout ?? base.timeout, top: top ?? base.top,
            collector: collector ?? base.collector, textfileDirectory: textfileDirectory ?? base.textfileDirectory)
    }
}

/// `serve:`'s settings: each as the flag of the same name says, and the flag wins. Relative paths are taken
/// from the fleet file's folder.
public struct FleetServeSettings: Sendable, Equatable {
    /// `listen:` (`--listen`).
    public var listen: String?
    /// `token_file:` (`--token-file`).
    public var tokenFile: String?
    /// `tls_cert:` (`--tls-cert`).
    public var tlsCertificate: String?
    /// `tls_key:` (`--tls-key`).
    public var tlsKey: String?
    /// `history: path:` (`--db`).
    public var historyPath: String?
    /// `history: retain:` (`--retain`).
    public var historyRetention: Duration?
    /// `history: enabled: false` (`--no-history`).
    public var historyEnabled: Bool?
    /// `otlp: endpoint:` (`--otlp-endpoint`).
    public var otlpEndpoint: String?
    /// `otlp: headers_file:` (`--otlp-headers-file`).
    public var otlpHeadersFile: String?
    /// `rules:` (`--rules`): the alert rules file.
    public var rules: String?
    /// `alertmanager:` (`--alertmanager`, repeatable): Alertmanager base URLs.
    public var alertmanagers: [String]
    /// `files_root:` (`--files-root`, repeatable): the hosts' directories the dashboard's Files screen may read.
    public var filesRoots: [String]
    /// `alertmanager_headers_file:` (`--alertmanager-headers`): the headers sent to them (a credential).
    public var alertmanagerHeadersFile: String?

    public init(
        listen: String? = nil, tokenFile: String? = nil, tlsCertificate: String? = nil, tlsKey: String? = nil,
        historyPath: String? = nil, historyRetention: Duration? = nil, historyEnabled: Bool? = nil,
        otlpEndpoint: String? = nil, otlpHeadersFile: String? = nil, rules: String? = nil, alertmanagers: [String] = [],
        filesRoots: [String] = []
    ) {
        self.listen = listen
        self.tokenFile = tokenFile
        self.tlsCertificate = tlsCertificate
        self.tlsKey = tlsKey
        self.historyPath = historyPath
        self.historyRetention = historyRetention
        self.historyEnabled = historyEnabled
        self.otlpEndpoint = otlpEndpoint
        self.otlpHeadersFile = otlpHeadersFile
        self.rules = rules
        self.alertmanagers = alertmanagers
        self.filesRoots = filesRoots
    }
}
