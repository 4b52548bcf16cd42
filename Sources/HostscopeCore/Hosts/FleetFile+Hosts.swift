public import FleetConfig
public import HostStats
import SSHTransport

extension FleetFile {
    /// The largest fleet file read: 1 MiB, as a hosts file.
    public static let maximumBytes = OperatorFile.maximumHostsFileBytes

    /// Reads and checks the fleet file at `path` (a regular file of at most ``maximumBytes``).
    ///
    /// - Throws: ``CoreError`` (`invalidRequest`) with the sentence to show: a file that cannot be read, or
    ///   the ``FleetFileError`` naming its line.
    public static func read(at path: String) throws(CoreError) -> FleetFile {
        let bytes = try OperatorFile.bytes(at: path, describedAs: "the fleet file", maximumBytes: maximumBytes)
        do {
            return try parse(String(decoding: bytes, as: UTF8.self), path: path)
        } catch {
            throw CoreError(.invalidRequest, error.message)
        }
    }

    /// `message` of a host entry's problem, with its place written as every fleet-file message writes it:
    /// `the fleet file F, line N:` rather than ssh_config's `F line N:`.
    func naming(_ message: String) -> String {
        let place = "\(path) line "
        guard message.hasPrefix(place) else { return message }
        return "the fleet file \(path), line " + message.dropFirst(place.count)
    }
}

extension FleetEntry {
    /// The host profile of this entry: its labels and its group's settings.
    var profile: HostProfile {
        HostProfile(
            labels: labels, interval: settings.interval, timeout: settings.timeout, top: settings.top,
            collector: settings.collector.flatMap(CollectorKind.init(rawValue:)),
            textfileDirectory: settings.textfileDirectory)
    }
}

extension HostResolver {
    /// Gives the fleet's hosts the labels and settings of the file's entries that name or select them. A host
    /// named outright takes its entry's, over any pattern that selects it too; a host two patterns select with
    /// different labels or settings is refused, naming both lines (one named twice so is refused on reading).
    func profile(_ fleet: inout ResolvedFleet, from file: FleetFile) throws(CoreError) {
        var owners: [String: FleetEntry] = [:]
        let entries = file.entries
        let named = entries.filter { !HostList.isPattern($0.text) }
        for entry in named + entries.filter({ HostList.isPattern($0.text) }) {
            let location = SSHConfigLocation(file: file.path, line: entry.line)
            let targets: [HostTarget]
            do {
                targets = try HostList.targets(
                    for: [HostListEntry(text: entry.text, location: location)], config: config)
            } catch {
                throw CoreError(.invalidRequest, file.naming(error.message))
            }
            if HostList.isPattern(entry.text) { fleet.patternProfiles.append((entry.text, entry.profile)) }
            for target in targets {
                let name: String
                do {
                    name = try resolve(target).displayName
                } catch {
                    throw CoreError(.invalidRequest, file.naming("\(location): \(error.message)"))
                }
                if let first = owners[name] {
                    if HostList.isPattern(first.text), let conflict = FleetEntry.conflict(first, entry) {
                        throw CoreError(
                            .invalidRequest,
                            FleetFileError(
                                path: file.path, line: entry.line,
                                "\(name) (from \(entry.text)) is also selected by \(first.text) (line \(first.line)) "
                                    + "with \(conflict); give it the same in both groups, or select it once"
                            ).message)
                    }
                    continue
                }
                owners[name] = entry
                fleet.profiles[name] = entry.profile
            }
        }
        fleet.file = file
    }
}

extension ResolvedFleet {
    /// The labels and group settings of the host called `name`: those of the fleet file's entry that names or
    /// selects it, or of the pattern that admits it on request; empty for a host the file does not cover.
    public func profile(of name: String) -> HostProfile {
        if let profile = profiles[name] { return profile }
        guard let normalized = PatternAdmission.normalized(name) else { return HostProfile() }
        return patternProfiles.first { PatternAdmission.patternDots(selecting: normalized, patternList: $0.0) != nil }?
            .1 ?? HostProfile()
    }

    /// The fleet with the settings the command line gave cleared from its profiles, so that the flags win.
    public func overridden(by flags: FleetFlags) -> ResolvedFleet {
        let clear = { (profile: HostProfile) in
            profile.overridden(
                interval: flags.interval, timeout: flags.timeout, top: flags.top, collector: flags.collector,
                textfileDirectory: flags.textfileDirectory)
        }
        var fleet = self
        fleet.profiles = profiles.mapValues(clear)
        fleet.patternProfiles = patternProfiles.map { ($0.0, clear($0.1)) }
        return fleet
    }
}

/// Which collection settings the command line gave, so that they win over a fleet file's groups.
public struct FleetFlags: Sendable, Equatable {
    /// The interval and collection settings of a plan: the command's (`interval`, `collector`) where a flag
    /// gave them, else the fleet file's `defaults:`, else the command's built-in ones.
    public func applying(_ defaults: FleetCollectionDefaults, interval: Duration, collector: CollectorOptions)
        -> (Duration, CollectorOptions)
    {
        var options = collector
        if !self.timeout, let timeout = defaults.timeout { options.commandTimeout = timeout }
        if !self.top, let top = defaults.top { options.topProcesses = top }
        if !self.collector, let kind = defaults.collector { options.kind = kind }
        if !self.textfileDirectory, let directory = defaults.textfileDirectory {
            options.textfileDirectory = directory
        }
        return (self.interval ? interval : defaults.interval ?? interval, options)
    }

    public var interval: Bool
    public var timeout: Bool
    public var top: Bool
    public var collector: Bool
    public var textfileDirectory: Bool

    public init(
        interval: Bool = false, timeout: Bool = false, top: Bool = false, collector: Bool = false,
        textfileDirectory: Bool = false
    ) {
        self.interval = interval
        self.timeout = timeout
        self.top = top
        self.collector = collector
        self.textfileDirectory = textfileDirectory
    }
}

/// A fleet file's `defaults:` collection settings, for the hosts its groups do not name (a host argument, a
/// host a pattern admits on request).
public struct FleetCollectionDefaults: Sendable, Equatable {
    public var interval: Duration?
    public var timeout: Duration?
    public var top: Int?
    public var collector: CollectorKind?
    public var textfileDirectory: String?

    /// No defaults: the command's own.
    public init() {}

    /// The `defaults:` of `file`, if any.
    public init(_ file: FleetFile?) {
        interval = file?.defaults.interval
        timeout = file?.defaults.timeout
        top = file?.defaults.top
        collector = file?.defaults.collector.flatMap(CollectorKind.init(rawValue:))
        textfileDirectory = file?.defaults.textfileDirectory
    }
}
