import Foundation
public import HostscopeCore

/// The live one-line-per-host view `watch` draws on a terminal: a progress line while hosts
/// connect, then each host's last tick, CPU, memory and errors, redrawn in place.
public actor LiveStatus {
    private var statuses: [String: HostWatchState] = [:]
    private let order: [String]
    private var drawnLines = 0
    private var lastDraw: ContinuousClock.Instant?
    private let write: @Sendable (TerminalOutput) -> Void
    private let width: Int
    private let started = Date()

    public init(hosts: [String], width: Int, write: @escaping @Sendable (TerminalOutput) -> Void) {
        order = hosts
        self.width = width
        self.write = write
    }

    /// Redraws for a watch event (a record needs no redraw: the state change after it carries it).
    public func update(_ event: WatchEvent) {
        switch event {
        case .state(let state): update(state)
        case .record, .removed, .missed: break
        }
    }

    public func update(_ status: HostWatchState) {
        statuses[status.host] = status
        // At most four redraws a second, however many hosts report.
        if let lastDraw, lastDraw.duration(to: .now) < .milliseconds(250) { return }
        draw()
    }

    /// Draws the final state (called once at the end).
    public func finish() {
        draw()
    }

    /// The text of the view, without cursor movement.
    public func render() -> [String] {
        // Reporting: the last tick gave figures; failing: it gave an error. A host is one or the other (or
        // still connecting), never both.
        let connected = order.filter { statuses[$0]?.phase == .up }.count
        let failing = order.filter { statuses[$0].map { $0.phase != .up && $0.phase != .connecting } ?? false }.count
        var lines = [
            "watching \(order.count) host\(order.count == 1 ? "" : "s") · \(connected) reporting · \(failing) failing · "
                + "running \(FigureText.uptime(Date().timeIntervalSince(started)))"
        ]
        let nameWidth = min(28, max(4, order.map(\.count).max() ?? 4))
        for host in order {
            let status = statuses[host] ?? HostWatchState(host: host)
            let name = TerminalText.truncate(TerminalText.sanitize(host), to: nameWidth)
                .padding(toLength: nameWidth, withPad: " ", startingAt: 0)
            let last = status.lastTick.map { Self.clock.string(from: $0) } ?? "--:--:--"
            var line = "\(name)  \(Self.label(status.phase).padding(toLength: 10, withPad: " ", startingAt: 0)) \(last)"
            line +=
                "  cpu " + FigureText.percent(status.cpuBusyPercent).padding(toLength: 6, withPad: " ", startingAt: 0)
            line +=
                "  mem "
                + FigureText.percent(status.memoryUsedPercent).padding(toLength: 6, withPad: " ", startingAt: 0)
            line += "  ticks \(status.ticks)  errors \(status.errors)"
            if let error = status.lastError, status.phase != .up {
                line += "  " + TerminalText.sanitize(error)
            }
            lines.append(TerminalText.truncate(line, to: width))
        }
        return lines
    }

    /// The word for a phase: `connecting`, `ok`, `failing`, or `waiting` for a backoff.
    static func label(_ phase: HostWatchState.Phase) -> String {
        switch phase {
        case .connecting: "connecting"
        case .up: "ok"
        case .failing: "failing"
        case .backingOff: "waiting"
        }
    }

    private func draw() {
        lastDraw = .now
        let lines = render()
        var output = TerminalOutput.cursorUp(drawnLines)
        for line in lines { output += .carriageReturn + .eraseLine + TerminalOutput(line + "\n") }
        drawnLines = lines.count
        write(output)
    }

    private static let clock: DateFormatter = {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss"
        return formatter
    }()
}
