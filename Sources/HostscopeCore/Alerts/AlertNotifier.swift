public import AgentTracing
public import Alerting
import CurlHTTP
import DequeModule
public import Foundation
import OrderedJSON
import Synchronization
import ValueFormats

/// Where alert notifications go, and the headers sent with them (an `Authorization` credential): secrets, read
/// from a file or the environment by ``HeaderSources`` (which registers them with the scrubber), never printed,
/// traced or stored.
public struct AlertReceiver: Sendable {
    /// What kind of receiver it is.
    public enum Kind: Sendable, Equatable {
        /// An Alertmanager, through its v2 API (`POST URL/api/v2/alerts`).
        case alertmanager
        /// A plain webhook, sent Alertmanager's webhook payload (version 4), as ntfy or Slack relays read it.
        case webhook
    }

    public var kind: Kind
    /// The URL as given: an Alertmanager's base URL, or the webhook's.
    public var address: String
    /// Headers sent with every request to it.
    public var headers: [(name: String, value: String)]

    /// An Alertmanager at `base`.
    public static func alertmanager(_ base: String, headers: [(name: String, value: String)] = []) -> AlertReceiver {
        AlertReceiver(kind: .alertmanager, address: base, headers: headers)
    }

    /// A webhook at `url`.
    public static func webhook(_ url: String, headers: [(name: String, value: String)] = []) -> AlertReceiver {
        AlertReceiver(kind: .webhook, address: url, headers: headers)
    }

    /// Where the alerts are POSTed.
    var url: String {
        switch kind {
        case .alertmanager: (address.hasSuffix("/") ? String(address.dropLast()) : address) + "/api/v2/alerts"
        case .webhook: address
        }
    }
}

/// Sends firing and resolved alerts to receivers without ever holding up the watch: transitions go into a
/// bounded queue that one task empties; a failed send is retried with backoff; what cannot be queued or sent
/// is dropped, counted and logged. Firing alerts are sent again every ``resendInterval`` (as Prometheus
/// re-sends to Alertmanager), resolved ones once with their `endsAt`.
public final class AlertNotifier: Sendable {
    private struct State {
        var queue: Deque<ActiveAlert> = []
        var dropped = 0
        var sent = 0
        var waiting: CheckedContinuation<Void, Never>?
        var finished = false
    }

    private let receivers: [AlertReceiver]
    private let engine: AlertEngine
    private let diagnostics: Diagnostics
    private let retry: OTLPRetryPolicy
    private let state = Lock(State())
    /// Alerts held for sending at most; past it the oldest are dropped.
    public let capacity: Int
    public let resendInterval: Duration
    private let now: @Sendable () -> Date

    public init(
        receivers: [AlertReceiver], engine: AlertEngine, diagnostics: Diagnostics, capacity: Int = 1024,
        resendInterval: Duration = .seconds(60), retry: OTLPRetryPolicy = OTLPRetryPolicy(maximumAttempts: 4),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.receivers = receivers
        self.engine = engine
        self.diagnostics = diagnostics
        self.capacity = max(1, capacity)
        self.resendInterval = resendInterval
        self.retry = retry
        self.now = now
    }

    /// Notifications dropped so far (queue full, or a receiver that kept failing).
    public var dropped: Int { state.withLock { $0.dropped } }
    /// Requests that a receiver accepted so far.
    public var sent: Int { state.withLock { $0.sent } }

    /// Sends until the task is cancelled or the engine's transitions end; then sends what is queued.
    public func run() async {
        let transitions = engine.subscribe()
        let configuration = HTTPClient.Configuration(userAgent: "hostscope/\(HostscopeVersion.string)")
        await withHTTPClient(configuration: configuration) { client in
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await transition in transitions where transition.to == .firing || transition.to == .resolved {
                        self.enqueue([transition.alert])
                    }
                    self.finish()
                }
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: self.resendInterval)
                        if Task.isCancelled { break }
                        self.enqueue(self.engine.alerts.filter { $0.state == .firing })
                    }
                }
                group.addTask { await self.send(with: client) }
                await group.next()
                group.cancelAll()
                self.finish()
                await group.waitForAll()
            }
        }
    }

    /// Queues alerts for sending; beyond ``capacity`` the oldest are dropped and counted.
    func enqueue(_ alerts: [ActiveAlert]) {
        guard !alerts.isEmpty else { return }
        let (overflow, waiter) = state.withLock { state -> (Int, CheckedContinuation<Void, Never>?) in
            state.queue.append(contentsOf: alerts)
            let overflow = max(0, state.queue.count - capacity)
            state.queue.removeFirst(overflow)
            state.dropped += overflow
            defer { state.waiting = nil }
            return (overflow, state.waiting)
        }
        if overflow > 0 {
            diagnostics.warning("\(overflow) alert notification(s) dropped: the receivers are \(capacity) behind")
        }
        waiter?.resume()
    }

    private func finish() {
        let waiter = state.withLock { state in
            state.finished = true
            defer { state.waiting = nil }
            return state.waiting
        }
        waiter?.resume()
    }

    private func send(with client: HTTPClient) async {
        while true {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if !state.queue.isEmpty || state.finished { return true }
                    state.waiting = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
            let (alerts, finished) = state.withLock { state in
                let taken = Array(state.queue.prefix(64))
                state.queue.removeFirst(taken.count)
                return (taken, state.finished)
            }
            if alerts.isEmpty {
                if finished { return }
                continue
            }
            for receiver in receivers {
                await deliver(alerts, to: receiver, client: client)
            }
        }
    }

    private func deliver(_ alerts: [ActiveAlert], to receiver: AlertReceiver, client: HTTPClient) async {
        let body = Self.body(alerts, for: receiver.kind, now: now())
        let request = HTTPRequest.postJSON(
            url: receiver.url, json: body, headers: HTTPHeaders(receiver.headers.map { ($0.name, $0.value) }),
            timeouts: HTTPTimeouts(connect: .seconds(5), total: .seconds(10)))
        var reason = ""
        for attempt in 1...retry.maximumAttempts {
            do {
                let response = try await client.execute(request, maxBodyBytes: 64 << 10)
                if response.head.isSuccess {
                    state.withLock { $0.sent += 1 }
                    return
                }
                reason = "answered \(response.status)"
                // A 4xx is refused again whatever the wait: only a server's trouble is retried.
                if response.status < 500 && response.status != 429 { break }
            } catch {
                reason = error.message
                if Task.isCancelled { break }
            }
            if attempt < retry.maximumAttempts {
                try? await retry.sleep(retry.jitter(retry.backoff(afterAttempt: attempt)))
            }
        }
        state.withLock { $0.dropped += alerts.count }
        diagnostics.warning(
            "\(alerts.count) alert notification(s) to \(receiver.url) dropped: \(reason); the watch goes on")
    }

    /// The request body: Alertmanager's v2 `postableAlerts`, or its webhook payload.
    static func body(_ alerts: [ActiveAlert], for receiver: AlertReceiver.Kind, now: Date) -> String {
        func strings(_ map: [String: String]) -> JSONValue {
            .object(JSONObject(map.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) }))
        }
        func endsAt(_ alert: ActiveAlert) -> Date {
            // Firing: a little past the next re-send, so Alertmanager resolves it by itself should hostscope stop.
            alert.state == .resolved ? now : now.addingTimeInterval(4 * 60)
        }
        switch receiver {
        case .alertmanager:
            return JSONWriter().string(
                .array(
                    alerts.map { alert in
                        .object([
                            "labels": strings(alert.labels),
                            "annotations": strings(alert.annotations),
                            "startsAt": .string(RFC3339.format(alert.firedAt ?? alert.activeAt)),
                            "endsAt": .string(RFC3339.format(endsAt(alert))),
                        ])
                    }))
        case .webhook:
            let firing = alerts.contains { $0.state != .resolved }
            return JSONWriter().string(
                .object([
                    "version": "4",
                    "groupKey": .string("hostscope"),
                    "truncatedAlerts": 0,
                    "status": .string(firing ? "firing" : "resolved"),
                    "receiver": "hostscope",
                    "groupLabels": .object([:]),
                    "commonLabels": .object([:]),
                    "commonAnnotations": .object([:]),
                    "externalURL": "",
                    "alerts": .array(
                        alerts.map { alert in
                            .object([
                                "status": .string(alert.state == .resolved ? "resolved" : "firing"),
                                "labels": strings(alert.labels),
                                "annotations": strings(alert.annotations),
                                "startsAt": .string(RFC3339.format(alert.firedAt ?? alert.activeAt)),
                                "endsAt": .string(
                                    alert.state == .resolved ? RFC3339.format(now) : "0001-01-01T00:00:00Z"),
                                "generatorURL": "",
                                "fingerprint": .string(alert.fingerprint),
                            ])
                        }),
                ]))
        }
    }
}
