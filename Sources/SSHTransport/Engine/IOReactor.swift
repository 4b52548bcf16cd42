import CLinuxEvents
import Foundation
import HeapModule
import Synchronization
import ValueFormats

#if canImport(Glibc)
    import Glibc
#endif

/// One I/O thread of the engine: drives many non-blocking SSH sessions from one `epoll` set.
///
/// Each session belongs to exactly one reactor for its whole life, so libssh2 is never called for
/// it from two threads. Other threads reach a session only by waking it (``wake(_:)``): the
/// session is put on this reactor's list and the thread is woken through an eventfd. Deadlines
/// (connect timeouts, command deadlines, keepalives) sit in one heap; each entry carries the
/// deadline the session asked for, so a stale entry is recognised and skipped when it comes up.
// @unchecked Sendable: everything but `inbox` (a Lock), `wakeDescriptor` and `sessionCount` (an
// Atomic) is touched only by the reactor's own thread.
final class IOReactor: @unchecked Sendable {
    private struct Inbox {
        var attached: [SessionLoop] = []
        var woken: [SessionLoop] = []
    }

    private struct TimerEntry: Comparable {
        var due: ContinuousClock.Instant
        var token: UInt64
        static func < (lhs: TimerEntry, rhs: TimerEntry) -> Bool { lhs.due < rhs.due }
    }

    /// What a session asks of its reactor after a step.
    struct Interest: Equatable {
        /// The descriptor to watch, or -1 for none (the session waits for a wake-up or a timer).
        var descriptor: Int32 = -1
        /// Changes whenever the session opens a new socket: a closed descriptor leaves the epoll
        /// set by itself, and its number may come back for the next socket.
        var descriptorGeneration = 0
        var readable = false
        var writable = false
        /// Watch only for the peer closing (an idle session: unread data stays in the socket).
        var hangUpOnly = false
        /// The session waits on the socket for its own operations: a sweep every quarter second
        /// re-runs it in case libssh2 holds data that another operation's read pulled in.
        var busy = false
        /// The session could do more right away but yielded so that others get their turn.
        var runAgain = false
        /// When the session wants to be stepped again even if nothing happens.
        var deadline: ContinuousClock.Instant?
        /// The session has ended; the reactor forgets it.
        var ended = false

        var epollEvents: UInt32 {
            if descriptor < 0 { return 0 }
            if hangUpOnly { return hostscope_epoll_rdhup() }
            var events: UInt32 = 0
            if readable { events |= hostscope_epoll_in() }
            if writable { events |= hostscope_epoll_out() }
            return events == 0 ? hostscope_epoll_in() : events
        }
    }

    /// The socket events a session is stepped with.
    struct Readiness {
        var readable = false
        var writable = false
        var hangUp = false
        static let none = Readiness()
    }

    private struct Registration {
        var descriptor: Int32
        var generation: Int
        var events: UInt32
    }

    let index: Int
    private let epoll: Int32
    private let wakeDescriptor: Int32
    private let inbox = Lock(Inbox())
    /// Sessions attached and not yet ended, for placing new sessions on the least loaded reactor.
    private let sessionCount = Atomic<Int>(0)

    // Reactor-thread state.
    private var sessions: [UInt64: SessionLoop] = [:]
    private var registrations: [UInt64: Registration] = [:]
    private var requestedDeadline: [UInt64: ContinuousClock.Instant] = [:]
    private var timers = Heap<TimerEntry>()
    private var busy: Set<UInt64> = []
    private var runAgain: [UInt64] = []
    private var nextSweep = ContinuousClock.now
    /// Descriptors sessions watch besides their sockets, by their epoll tokens.
    private var watches: [UInt64: DescriptorWatch] = [:]
    private var nextWatchToken = DescriptorWatch.firstToken
    /// One read buffer for every channel read on this thread: operations of different sessions
    /// never read at the same time here, so none needs a buffer of its own.
    var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)

    private static let sweepInterval: Duration = .milliseconds(250)
    private static let epollAdd: Int32 = 1
    private static let epollDelete: Int32 = 2
    private static let epollModify: Int32 = 3

    init(index: Int) {
        self.index = index
        epoll = hostscope_epoll_create()
        wakeDescriptor = hostscope_eventfd_create()
        _ = hostscope_epoll_control(epoll, Self.epollAdd, wakeDescriptor, hostscope_epoll_in(), UInt64.max)
        let thread = Thread { [self] in run() }
        thread.name = "ssh io \(index)"
        thread.start()
    }

    var load: Int { sessionCount.load(ordering: .relaxed) }

    // MARK: - Any thread

    /// Hands a new session to this reactor; its first step runs on the reactor's thread.
    func attach(_ session: SessionLoop) {
        sessionCount.add(1, ordering: .relaxed)
        let first = inbox.withLock { inbox in
            inbox.attached.append(session)
            return inbox.attached.count == 1 && inbox.woken.isEmpty
        }
        if first { signal() }
    }

    /// Asks for `session` to be stepped soon (new work, a cancellation, a reply from another thread).
    func wake(_ session: SessionLoop) {
        guard session.claimWake() else { return }
        let first = inbox.withLock { inbox in
            inbox.woken.append(session)
            return inbox.woken.count == 1 && inbox.attached.isEmpty
        }
        if first { signal() }
    }

    private func signal() {
        var one: UInt64 = 1
        _ = write(wakeDescriptor, &one, 8)
    }

    // MARK: - Reactor thread

    private func run() {
        SessionLoop.nameCurrentThread("ssh io \(index)")
        let capacity = 256
        var tokens = [UInt64](repeating: 0, count: capacity)
        var events = [UInt32](repeating: 0, count: capacity)
        while true {
            let (attached, woken) = inbox.withLock { inbox in
                defer {
                    inbox.attached = []
                    inbox.woken = []
                }
                return (inbox.attached, inbox.woken)
            }
            for session in attached {
                sessions[session.token] = session
                step(session, .none)
            }
            for session in woken {
                session.releaseWake()
                if sessions[session.token] != nil { step(session, .none) }
            }
            let again = runAgain
            runAgain = []
            for token in again {
                if let session = sessions[token] { step(session, .none) }
            }
            fireTimers()
            if !busy.isEmpty && nextSweep <= .now {
                nextSweep = .now + Self.sweepInterval
                for token in busy {
                    if let session = sessions[token] { step(session, .none) }
                }
            }

            var timeout: Int32 = -1
            if !runAgain.isEmpty {
                timeout = 0
            } else {
                var wakeAt = timers.min?.due
                if !busy.isEmpty { wakeAt = wakeAt.map { min($0, nextSweep) } ?? nextSweep }
                if let wakeAt {
                    timeout = Int32(max(0, ContinuousClock.now.duration(to: wakeAt).timeoutMilliseconds))
                }
            }
            let count = tokens.withUnsafeMutableBufferPointer { tokenBuffer in
                events.withUnsafeMutableBufferPointer { eventBuffer in
                    hostscope_epoll_wait(
                        epoll, tokenBuffer.baseAddress, eventBuffer.baseAddress, Int32(capacity), timeout)
                }
            }
            guard count > 0 else { continue }
            // Sessions whose extra descriptors fired: each is stepped once, after the batch.
            var watchOwners: [UInt64] = []
            for index in 0..<Int(count) {
                let token = tokens[index]
                if token == UInt64.max {
                    var value: UInt64 = 0
                    _ = read(wakeDescriptor, &value, 8)
                    continue
                }
                let flags = events[index]
                let readiness = Readiness(
                    readable: flags & hostscope_epoll_in() != 0, writable: flags & hostscope_epoll_out() != 0,
                    hangUp: flags & (hostscope_epoll_rdhup() | hostscope_epoll_hup() | hostscope_epoll_err()) != 0)
                if token >= DescriptorWatch.firstToken {
                    guard let watch = watches[token] else { continue }
                    watch.readable = watch.readable || readiness.readable || readiness.hangUp
                    watch.writable = watch.writable || readiness.writable || readiness.hangUp
                    if !watchOwners.contains(watch.ownerToken) { watchOwners.append(watch.ownerToken) }
                    continue
                }
                guard let session = sessions[token] else { continue }
                step(session, readiness)
            }
            for token in watchOwners {
                if let session = sessions[token] { step(session, .none) }
            }
        }
    }

    // MARK: - Extra descriptors (reactor thread)

    /// Starts watching `descriptor` for the session `owner` (which runs on this reactor): when epoll reports
    /// it, the watch records what it saw and `owner` is stepped. Nothing is reported until
    /// ``update(_:readable:writable:)`` asks for it.
    func watch(_ descriptor: Int32, for owner: SessionLoop) -> DescriptorWatch {
        let watch = DescriptorWatch(descriptor: descriptor, token: nextWatchToken, ownerToken: owner.token)
        nextWatchToken += 1
        watches[watch.token] = watch
        return watch
    }

    /// Sets the directions `watch` is reported for, with a system call only when they changed; none takes
    /// the descriptor out of the epoll set (a closed peer would otherwise be reported again and again).
    func update(_ watch: DescriptorWatch, readable: Bool, writable: Bool) {
        var events: UInt32 = 0
        if readable { events |= hostscope_epoll_in() }
        if writable { events |= hostscope_epoll_out() }
        guard events != watch.events else { return }
        if events == 0 {
            _ = hostscope_epoll_control(epoll, Self.epollDelete, watch.descriptor, 0, watch.token)
        } else if watch.events == 0 {
            _ = hostscope_epoll_control(epoll, Self.epollAdd, watch.descriptor, events, watch.token)
        } else {
            _ = hostscope_epoll_control(epoll, Self.epollModify, watch.descriptor, events, watch.token)
        }
        watch.events = events
    }

    /// Stops watching; call before the descriptor is closed.
    func unwatch(_ watch: DescriptorWatch) {
        update(watch, readable: false, writable: false)
        watches[watch.token] = nil
    }

    private func fireTimers() {
        let now = ContinuousClock.now
        while let first = timers.min, first.due <= now {
            _ = timers.popMin()
            guard requestedDeadline[first.token] == first.due, let session = sessions[first.token] else { continue }
            requestedDeadline[first.token] = nil
            step(session, .none)
        }
    }

    private func step(_ session: SessionLoop, _ readiness: Readiness) {
        let interest = session.step(readiness, reactor: self)
        let token = session.token
        if interest.ended {
            // The session closed its socket, which took it out of the epoll set.
            registrations[token] = nil
            sessions[token] = nil
            requestedDeadline[token] = nil
            busy.remove(token)
            sessionCount.subtract(1, ordering: .relaxed)
            return
        }
        register(
            token, descriptor: interest.descriptor, generation: interest.descriptorGeneration,
            events: interest.epollEvents)
        if interest.busy { busy.insert(token) } else { busy.remove(token) }
        if interest.runAgain { runAgain.append(token) }
        if let deadline = interest.deadline {
            if requestedDeadline[token] != deadline {
                requestedDeadline[token] = deadline
                timers.insert(TimerEntry(due: deadline, token: token))
            }
        } else {
            requestedDeadline[token] = nil
        }
    }

    /// Keeps the epoll set in line with what the session waits for, with a system call only when
    /// that changed.
    private func register(_ token: UInt64, descriptor: Int32, generation: Int, events: UInt32) {
        if let current = registrations[token],
            current.descriptor != descriptor || current.generation != generation || events == 0
        {
            // A socket closed since it was added has left the set already (and its number may
            // belong to the session's next socket now): only a live one is removed.
            if current.generation == generation {
                _ = hostscope_epoll_control(epoll, Self.epollDelete, current.descriptor, 0, token)
            }
            registrations[token] = nil
        }
        guard descriptor >= 0, events != 0 else { return }
        if let current = registrations[token] {
            if current.events != events {
                _ = hostscope_epoll_control(epoll, Self.epollModify, descriptor, events, token)
                registrations[token]?.events = events
            }
        } else {
            if hostscope_epoll_control(epoll, Self.epollAdd, descriptor, events, token) != 0 && errno == EEXIST {
                _ = hostscope_epoll_control(epoll, Self.epollModify, descriptor, events, token)
            }
            registrations[token] = Registration(descriptor: descriptor, generation: generation, events: events)
        }
    }
}

/// A descriptor a session watches besides its own socket (the engine's end of a tunnel's socketpair).
///
/// Used on its reactor's thread only. The reactor sets ``readable`` and ``writable`` when epoll reports
/// them; the owner clears them when a read or write finds nothing to do, so a descriptor is only tried
/// when it is known to be ready.
final class DescriptorWatch {
    /// Watch tokens live above session tokens in the epoll data space (the eventfd has `UInt64.max`).
    static let firstToken: UInt64 = 1 << 62

    let descriptor: Int32
    let token: UInt64
    let ownerToken: UInt64
    /// The epoll events registered now.
    var events: UInt32 = 0
    /// Reported readable (or closed) since last cleared; starts true so the first step tries it.
    var readable = true
    /// Reported writable since last cleared.
    var writable = true

    init(descriptor: Int32, token: UInt64, ownerToken: UInt64) {
        self.descriptor = descriptor
        self.token = token
        self.ownerToken = ownerToken
    }
}
