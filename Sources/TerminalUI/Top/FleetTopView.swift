public import Alerting
public import Foundation
public import HostStats
public import HostscopeCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Whether styled output uses colour: `--color auto|always|never`, with `NO_COLOR` (no-color.org) turning
/// `auto` off.
public enum ColourChoice: String, Sendable, CaseIterable {
    case auto, always, never

    /// Whether to colour output that goes to a terminal (`isTerminal`) in `environment`.
    public func enabled(isTerminal: Bool, environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        switch self {
        case .always: true
        case .never: false
        case .auto: isTerminal && (environment["NO_COLOR"] ?? "").isEmpty && environment["TERM"] != "dumb"
        }
    }
}

/// The full-screen live view of `hostscope top` (and `watch` on a terminal): the fleet, a host's detail, keys
/// to move between them. The terminal is in raw mode (termios) while it runs and is given back as it was on
/// every way out: `q`, Ctrl-C, the watch ending, the task cancelled (SIGTERM), and at exit for the rest.
public enum FleetTopView {
    /// Whether standard input and output are a terminal that can show a full-screen view (not `TERM=dumb`).
    public static func isCapable(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard isatty(0) == 1, isatty(1) == 1 else { return false }
        let term = environment["TERM"] ?? ""
        return !term.isEmpty && term != "dumb"
    }

    private enum Input: Sendable {
        case event(WatchEvent)
        case alert(AlertTransition)
        case keys([TopKey])
        case tick
        case watchEnded
    }

    /// Shows `watch` until `q`, Ctrl-C, the end of the watch or cancellation; each alert of `alerts` that moves marks
    /// its host while it fires and is listed under `a`.
    public static func run(
        _ watch: FleetWatch, title: String, colours: Bool, allDevices: Bool = false,
        alerts: AsyncStream<AlertTransition>? = nil
    ) async {
        guard TerminalModes.save(0) != nil else { return }
        setRawMode(0)
        Output.write(.enterFullScreen)
        defer {
            Output.write(.leaveFullScreen)
            TerminalModes.restore(0)
        }
        var model = FleetTopModel(hosts: watch.states.map(\.host), interval: watch.plan.interval)
        model.title = title
        model.showsAllDevices = allDevices
        let (inputs, feed) = AsyncStream<Input>.makeStream(bufferingPolicy: .bufferingNewest(4096))
        let reader = KeyReader(descriptor: 0) { feed.yield(.keys($0)) }
        let events = Task {
            for await event in watch.subscribe() { feed.yield(.event(event)) }
            feed.yield(.watchEnded)
        }
        let moves = Task {
            for await transition in alerts ?? AsyncStream { $0.finish() } { feed.yield(.alert(transition)) }
        }
        let ticks = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
                feed.yield(.tick)
            }
        }
        defer {
            reader.stop()
            events.cancel()
            moves.cancel()
            ticks.cancel()
        }
        var size = terminalSize()
        var dirty = true
        draw(&model, size: size, colours: colours, clear: true)
        loop: for await input in inputs {
            switch input {
            case .event(let event):
                model.apply(event)
                dirty = true
            case .alert(let transition):
                model.apply(transition)
                dirty = true
            case .keys(let keys):
                for key in keys where model.handle(key) == .quit { break loop }
                draw(&model, size: size, colours: colours, clear: false)
                dirty = false
            case .tick:
                let current = terminalSize()
                let resized = current != size
                size = current
                if dirty || resized {
                    draw(&model, size: size, colours: colours, clear: resized)
                    dirty = false
                }
            case .watchEnded:
                break loop
            }
        }
    }

    /// One line per record for a terminal that cannot show the full-screen view (or a pipe).
    public static func plainLine(_ record: SnapshotRecord, timeZone: TimeZone = .current) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        func clock(_ date: Date) -> String {
            let parts = calendar.dateComponents([.hour, .minute, .second], from: date)
            return String(format: "%02d:%02d:%02d", parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0)
        }
        switch record {
        case .failure(let failure):
            return "\(clock(failure.collectedAt)) \(failure.host) error \(failure.kind.rawValue): \(failure.message)"
        case .snapshot(let snapshot):
            var line = "\(clock(snapshot.collectedAt)) \(snapshot.host)"
            line += " cpu " + FleetTopModel.percent(snapshot.cpu?.busyPercent) + "%"
            line += " mem " + FleetTopModel.percent(snapshot.memory?.usedPercent) + "%"
            line += " load " + (snapshot.load.map { String(format: "%.2f", $0.one) } ?? "-")
            line +=
                " disk " + (snapshot.fullestDiskUsedPercent.map { String(format: "%.0f%%", $0) } ?? "-")
            line += " net " + (FleetTopModel.networkRate(snapshot).map { FleetTopModel.compactBytes($0) + "/s" } ?? "-")
            return line
        }
    }

    private static func draw(_ model: inout FleetTopModel, size: (columns: Int, rows: Int), colours: Bool, clear: Bool)
    {
        var output = clear ? TerminalOutput.eraseScreen : TerminalOutput()
        output += model.screen(width: size.columns, height: size.rows, now: Date(), colours: colours)
        Output.write(output)
    }

    /// The terminal's size, 80×24 when it cannot be told.
    static func terminalSize() -> (columns: Int, rows: Int) {
        var size = winsize()
        guard ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return (80, 24) }
        return (Int(size.ws_col), Int(size.ws_row))
    }

    /// Keys one at a time, unechoed, Ctrl-C as a byte; output processing is kept so that the view's lines end as
    /// written. Reads return after a tenth of a second without input, so the key reader can be stopped.
    private static func setRawMode(_ descriptor: Int32) {
        var mode = termios()
        guard tcgetattr(descriptor, &mode) == 0 else { return }
        mode.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
        mode.c_iflag &= ~tcflag_t(IXON | ICRNL | BRKINT | INPCK | ISTRIP)
        withUnsafeMutablePointer(to: &mode.c_cc) {
            $0.withMemoryRebound(to: cc_t.self, capacity: Int(NCCS)) { characters in
                characters[Int(VMIN)] = 0
                characters[Int(VTIME)] = 1
            }
        }
        tcsetattr(descriptor, TCSAFLUSH, &mode)
    }
}

/// Reads keys from a terminal in raw mode on a thread of its own (a blocking read has no place on the
/// cooperative pool), until stopped or the input ends.
final class KeyReader: Sendable {
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    init(descriptor: Int32, keys: @escaping @Sendable ([TopKey]) -> Void) {
        let thread = Thread { [self] in
            var decoder = TopKeyDecoder()
            var buffer = [UInt8](repeating: 0, count: 256)
            while !self.stopped.load(ordering: .relaxed) {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR || errno == EAGAIN { continue }
                if count < 0 { break }
                if count == 0 {
                    // VTIME ran out with nothing typed; a lone Esc is complete by now.
                    let pending = decoder.flush()
                    if !pending.isEmpty { keys(pending) }
                    continue
                }
                let decoded = decoder.feed(buffer[0..<count])
                if !decoded.isEmpty { keys(decoded) }
            }
            self.finished.signal()
        }
        thread.name = "hostscope.keys"
        thread.start()
    }

    /// Stops reading and waits for the thread (at most one read timeout).
    func stop() {
        stopped.store(true, ordering: .relaxed)
        finished.wait()
    }
}

/// Turns a terminal's bytes into keys: printable characters (UTF-8), Enter, Backspace, Tab, Ctrl-C, Esc, and
/// the arrow, page and home/end sequences of xterm-like terminals (CSI and SS3 forms).
struct TopKeyDecoder {
    private var pending: [UInt8] = []

    mutating func feed<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> [TopKey] {
        pending.append(contentsOf: bytes)
        var keys: [TopKey] = []
        while let (key, used) = Self.decode(pending, final: false) {
            pending.removeFirst(used)
            if let key { keys.append(key) }
        }
        return keys
    }

    /// What is pending once no more bytes came: a lone Esc is the Esc key.
    mutating func flush() -> [TopKey] {
        var keys: [TopKey] = []
        while let (key, used) = Self.decode(pending, final: true) {
            pending.removeFirst(used)
            if let key { keys.append(key) }
        }
        pending.removeAll()
        return keys
    }

    /// The key at the start of `bytes` and the bytes it took, `nil` when more bytes are needed.
    private static func decode(_ bytes: [UInt8], final: Bool) -> (TopKey?, Int)? {
        guard let first = bytes.first else { return nil }
        switch first {
        case 0x1B:
            guard bytes.count > 1 else { return final ? (.escape, 1) : nil }
            guard bytes[1] == UInt8(ascii: "[") || bytes[1] == UInt8(ascii: "O") else { return (.escape, 1) }
            // CSI/SS3: parameters, then a final byte in 0x40...0x7E.
            guard let end = bytes.dropFirst(2).firstIndex(where: { (0x40...0x7E).contains($0) }) else {
                return final ? (.escape, bytes.count) : nil
            }
            let parameters = String(decoding: bytes[2..<end], as: UTF8.self)
            let key: TopKey? =
                switch (bytes[end], parameters) {
                case (UInt8(ascii: "A"), _): .up
                case (UInt8(ascii: "B"), _): .down
                case (UInt8(ascii: "C"), _): .right
                case (UInt8(ascii: "D"), _): .left
                case (UInt8(ascii: "H"), _), (UInt8(ascii: "~"), "1"), (UInt8(ascii: "~"), "7"): .home
                case (UInt8(ascii: "F"), _), (UInt8(ascii: "~"), "4"), (UInt8(ascii: "~"), "8"): .end
                case (UInt8(ascii: "~"), "5"): .pageUp
                case (UInt8(ascii: "~"), "6"): .pageDown
                default: nil
                }
            return (key, end + 1)
        case 0x0D, 0x0A: return (.enter, 1)
        case 0x7F, 0x08: return (.backspace, 1)
        case 0x09: return (.tab, 1)
        case 0x03: return (.interrupt, 1)
        case 0x00..<0x20: return (nil, 1)
        default:
            let length = first >= 0xF0 ? 4 : first >= 0xE0 ? 3 : first >= 0xC0 ? 2 : 1
            guard bytes.count >= length else { return final ? (nil, bytes.count) : nil }
            let text = String(decoding: bytes[0..<length], as: UTF8.self)
            return (text.first.map(TopKey.character), length)
        }
    }
}
