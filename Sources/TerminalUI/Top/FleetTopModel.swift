public import Alerting
public import Foundation
public import HostStats
public import HostscopeCore

/// A key of the full-screen view, decoded from the terminal's bytes.
public enum TopKey: Sendable, Equatable {
    case character(Character)
    case up, down, left, right, pageUp, pageDown, home, end
    case enter, escape, backspace, tab
    /// Ctrl-C (raw mode delivers it as a byte, not a signal).
    case interrupt
}

/// What the view's driver does after a key.
public enum TopCommand: Sendable, Equatable {
    case redraw
    case quit
}

/// The state of `hostscope top`: every host's live state and its last snapshot (kept when the host fails, and
/// shown dimmed with its age), a short history of CPU and memory for the sparklines, and what the person
/// chose (selection, filter, sort, the host opened in detail). A value driven from outside: watch events and
/// keys in, lines out, so that every screen is tested without a terminal.
public struct FleetTopModel: Sendable {
    /// Which screen is shown.
    public enum Screen: Sendable, Equatable {
        case fleet
        /// One host's detail.
        case detail(host: String)
        /// The firing alerts of every host (`a`).
        case alerts
    }

    /// Orders of the fleet list (`s` cycles through them).
    public enum SortKey: String, Sendable, CaseIterable {
        case name, cpu, memory, load, disk, network
    }

    /// Orders of a host's processes (`s` in the detail).
    public enum ProcessSort: String, Sendable, CaseIterable {
        case cpu, memory, pid
    }

    struct Host: Sendable {
        var state: HostWatchState
        /// The last snapshot, kept while the host fails.
        var snapshot: Snapshot?
        var cpuHistory: [Double] = []
        var memoryHistory: [Double] = []
    }

    /// Samples kept per host for the sparklines (enough for the widest column).
    static let historyLength = 60

    private(set) var order: [String] = []
    private(set) var hosts: [String: Host] = [:]
    public private(set) var screen = Screen.fleet
    /// The selected host, by name (stays on it when the order changes).
    public private(set) var selected: String?
    public private(set) var sort = SortKey.name
    public private(set) var processSort = ProcessSort.cpu
    /// Hosts whose name contains this (case ignored) are listed.
    public private(set) var filter = ""
    /// Whether keys are typed into the filter (after `/`, until Enter or Esc).
    public private(set) var editingFilter = false
    /// Hosts whose error is shown in full under their row.
    public private(set) var expanded: Set<String> = []
    /// The tick interval, shown in the header.
    public var interval: Duration
    /// The first words of the header (`hostscope top`, `hostscope watch`).
    public var title = "hostscope top"
    /// Whether a host's detail lists pseudo filesystems and virtual interfaces too (`--all`; ``ShownDevices``).
    public var showsAllDevices = false
    /// The zone of the clock times shown (the local one; tests fix it).
    public var timeZone = TimeZone.current
    /// The first row of the list shown (when the list is longer than the screen).
    private var scroll = 0
    /// The firing alerts, by fingerprint: a host with any is marked, `a` lists them.
    private(set) var firing: [String: ActiveAlert] = [:]

    public init(hosts: [String], interval: Duration) {
        self.interval = interval
        for host in hosts where self.hosts[host] == nil {
            order.append(host)
            self.hosts[host] = Host(state: HostWatchState(host: host))
        }
        selected = order.first
    }

    // MARK: - Events

    /// Takes in what the watch said.
    public mutating func apply(_ event: WatchEvent) {
        switch event {
        case .state(let state):
            if hosts[state.host] == nil {
                order.append(state.host)
                hosts[state.host] = Host(state: state)
            }
            hosts[state.host]?.state = state
            if selected == nil { selected = state.host }
        case .record(let record):
            guard case .snapshot(let snapshot) = record, hosts[snapshot.host] != nil else { return }
            hosts[snapshot.host]?.snapshot = snapshot
            if let busy = snapshot.cpu?.busyPercent { Self.push(busy, to: &hosts[snapshot.host]!.cpuHistory) }
            if let used = snapshot.memory?.usedPercent { Self.push(used, to: &hosts[snapshot.host]!.memoryHistory) }
        case .removed(let host):
            order.removeAll { $0 == host }
            hosts[host] = nil
            if selected == host { selected = order.first }
            if screen == .detail(host: host) { screen = .fleet }
        case .missed:
            break
        }
    }

    /// Takes in an alert that moved: one that fires is kept until it moves again.
    public mutating func apply(_ transition: AlertTransition) {
        firing[transition.alert.fingerprint] = transition.to == .firing ? transition.alert : nil
    }

    /// The firing alerts of `host` (of every host when `nil`), oldest first.
    public func firingAlerts(of host: String? = nil) -> [ActiveAlert] {
        firing.values.filter { host == nil || $0.host == host }.sorted {
            ($0.firedAt ?? $0.activeAt, $0.fingerprint) < ($1.firedAt ?? $1.activeAt, $1.fingerprint)
        }
    }

    private static func push(_ value: Double, to history: inout [Double]) {
        history.append(value)
        if history.count > historyLength { history.removeFirst(history.count - historyLength) }
    }

    // MARK: - Keys

    /// Acts on a key: `q` (or Ctrl-C) quits, arrows move, Enter opens the selected host, Esc goes back, `/`
    /// filters, `s` sorts, `e` shows the selected host's error in full, `a` lists the firing alerts.
    public mutating func handle(_ key: TopKey) -> TopCommand {
        if key == .interrupt { return .quit }
        if editingFilter { return editFilter(key) }
        switch (screen, key) {
        case (_, .character("q")), (_, .character("Q")):
            return .quit
        case (.fleet, .up), (.fleet, .character("k")):
            moveSelection(by: -1)
        case (.fleet, .down), (.fleet, .character("j")):
            moveSelection(by: 1)
        case (.fleet, .pageUp):
            moveSelection(by: -10)
        case (.fleet, .pageDown):
            moveSelection(by: 10)
        case (.fleet, .home):
            selected = visibleHosts.first
        case (.fleet, .end):
            selected = visibleHosts.last
        case (.fleet, .enter), (.fleet, .right):
            if let selected, visibleHosts.contains(selected) { screen = .detail(host: selected) }
        case (.fleet, .character("/")):
            editingFilter = true
        case (.fleet, .escape):
            filter = ""
        case (.fleet, .character("s")):
            sort = Self.next(after: sort)
        case (.fleet, .character("e")):
            if let selected {
                if expanded.contains(selected) { expanded.remove(selected) } else { expanded.insert(selected) }
            }
        case (.fleet, .character("a")), (.detail, .character("a")):
            screen = .alerts
        case (.detail, .escape), (.detail, .left), (.detail, .backspace), (.alerts, .escape), (.alerts, .left),
            (.alerts, .backspace), (.alerts, .character("a")):
            screen = .fleet
        case (.detail, .character("s")):
            processSort = Self.next(after: processSort)
        default:
            break
        }
        return .redraw
    }

    private mutating func editFilter(_ key: TopKey) -> TopCommand {
        switch key {
        case .enter:
            editingFilter = false
        case .escape:
            editingFilter = false
            filter = ""
        case .backspace:
            if !filter.isEmpty { filter.removeLast() }
        case .character(let character) where !character.isNewline:
            filter.append(character)
        default:
            break
        }
        if let selected, !visibleHosts.contains(selected) { self.selected = visibleHosts.first }
        if selected == nil { selected = visibleHosts.first }
        return .redraw
    }

    private mutating func moveSelection(by offset: Int) {
        let visible = visibleHosts
        guard !visible.isEmpty else { return }
        let index = selected.flatMap { visible.firstIndex(of: $0) } ?? 0
        selected = visible[min(max(index + offset, 0), visible.count - 1)]
    }

    private static func next<Value: CaseIterable & Equatable>(after value: Value) -> Value {
        let all = Array(Value.allCases)
        let index = all.firstIndex(of: value)!
        return all[(index + 1) % all.count]
    }

    // MARK: - Queries

    /// The hosts listed, filtered and in the chosen order: the filter matches a host's name or one of its
    /// fleet labels written `name=value` (`env=prod`, or `prod`).
    public var visibleHosts: [String] {
        let needle = filter.lowercased()
        let shown = order.filter { name in
            needle.isEmpty || name.lowercased().contains(needle)
                || Self.labelText(hosts[name]?.state.labels ?? [:]).lowercased().contains(needle)
        }
        guard sort != .name else { return shown }
        // Busiest first; hosts without the figure last, in their given order.
        let figures = Dictionary(uniqueKeysWithValues: shown.map { ($0, figure(sort, of: $0)) })
        return shown.enumerated().sorted { left, right in
            switch (figures[left.element]!, figures[right.element]!) {
            case (let a?, let b?) where a != b: return a > b
            case (nil, _?): return false
            case (_?, nil): return true
            default: return left.offset < right.offset
            }
        }.map(\.element)
    }

    /// A host's labels as `env=prod role=web`, in name order; empty without any.
    static func labelText(_ labels: [String: String]) -> String {
        labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }

    private func figure(_ key: SortKey, of name: String) -> Double? {
        guard let snapshot = hosts[name]?.snapshot else { return nil }
        switch key {
        case .name: return nil
        case .cpu: return snapshot.cpu?.busyPercent
        case .memory: return snapshot.memory?.usedPercent
        case .load: return snapshot.load?.one
        case .disk: return snapshot.fullestDiskUsedPercent
        case .network: return Self.networkRate(snapshot)
        }
    }

    static func networkRate(_ snapshot: Snapshot) -> Double? {
        let rates = snapshot.network.filter { $0.interface != "lo" }
            .compactMap { interface -> Double? in
                guard interface.rxBytesPerSecond != nil || interface.txBytesPerSecond != nil else { return nil }
                return (interface.rxBytesPerSecond ?? 0) + (interface.txBytesPerSecond ?? 0)
            }
        return rates.isEmpty ? nil : rates.reduce(0, +)
    }

    func host(_ name: String) -> Host? { hosts[name] }

    /// Keeps the selected row on screen for a list of `rows` rows.
    mutating func scrollToSelection(rows: Int) {
        let visible = visibleHosts
        guard rows > 0, let selected, let index = visible.firstIndex(of: selected) else {
            scroll = 0
            return
        }
        if index < scroll { scroll = index }
        if index >= scroll + rows { scroll = index - rows + 1 }
        scroll = max(0, min(scroll, max(0, visible.count - rows)))
    }

    var firstRow: Int { scroll }
}
