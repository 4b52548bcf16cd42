import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ServeAPI
import Synchronization
import ValueFormats

/// `GET /api/v1/events`: the live updates as server-sent events.
///
/// Events are `record` (a snapshot or error record, in the snapshot schema), `host_state` (a host's
/// state changed), `span` (a finished span, flat), `fleet` (the host list changed), `alert` (an alert moved:
/// pending, firing, resolved) and `reset` (the
/// client missed events: refetch `/api/v1/hosts`). Each has an id `EPOCH-N`; a client that reconnects
/// with `Last-Event-ID` gets what it missed while the log still holds it. `?types=record,host_state`
/// narrows the stream; `?view=summary` sends each record cut to what a fleet view shows (as
/// `/api/v1/hosts?view=summary`: a twentieth of the bytes to parse), except for the hosts `full=a,b` names,
/// whose records come whole. A comment line every 15 s keeps idle connections open through proxies.
enum EventStream {
    static let names: Set<String> = ["record", "host_state", "span", "fleet", "alert"]
    static let keepAlive: Duration = .seconds(15)

    /// Clients connected now, in all and by address, against ``ServeConfiguration/maximumEventClients`` and
    /// ``ServeConfiguration/maximumEventClientsPerAddress``: one client that never reads cannot take every slot.
    static let clients = Lock(Clients())

    struct Clients {
        var total = 0
        var byAddress: [String: Int] = [:]
    }

    static func response(_ request: Request, client: String, _ serve: ServeContext) throws -> Response {
        let query = try QueryParameters(request.uri.query, allowed: ["types", "view", "full"])
        let summary = try HostListRequest.summary(query)
        let fullHosts = Set((query["full"] ?? "").split(separator: ",").map(String.init))
        var wanted = names
        if let types = query["types"] {
            wanted = Set(types.split(separator: ",").map(String.init))
            let unknown = wanted.subtracting(names)
            guard unknown.isEmpty, !wanted.isEmpty else {
                throw APIError.badRequest(
                    "types lists event names separated by commas, from: \(names.sorted().joined(separator: ", "))")
            }
        }
        let configuration = serve.configuration
        let refusal = clients.withLock { clients -> String? in
            guard clients.total < configuration.maximumEventClients else {
                return "\(configuration.maximumEventClients) event streams are open already; try again later"
            }
            guard clients.byAddress[client, default: 0] < configuration.maximumEventClientsPerAddress else {
                return "\(configuration.maximumEventClientsPerAddress) event streams from \(client) are open already; "
                    + "close one, or try again later"
            }
            clients.total += 1
            clients.byAddress[client, default: 0] += 1
            return nil
        }
        if let refusal {
            throw APIError(status: 503, code: "too_many_streams", message: refusal, retryAfterSeconds: 5)
        }
        let selected = wanted
        let log = serve.board.events
        let lastEventID = request.headers[HTTPField.Name("Last-Event-ID")!]
        let body = ResponseBody { writer in
            defer {
                clients.withLock { clients in
                    clients.total -= 1
                    clients.byAddress[client, default: 1] -= 1
                    if clients.byAddress[client] == 0 { clients.byAddress[client] = nil }
                }
            }
            let (id, doorbell) = log.subscribe()
            defer { log.unsubscribe(id) }
            let resume = log.resumePosition(lastEventID: lastEventID)
            var position = resume.position
            try await writer.write(ByteBuffer(string: "retry: 2000\n\n"))
            if resume.gap {
                let reset = ServerSentEvent(
                    sequence: position, name: "reset",
                    data: APIEncoding.reset(reason: "the last event id is not in this server's log"))
                try await writer.write(ByteBuffer(string: reset.framed(epoch: log.epoch)))
            }
            var lastWrite = ContinuousClock.now
            for await _ in doorbell {
                let reading = log.read(after: position)
                var text = ""
                if reading.gap {
                    let reset = ServerSentEvent(
                        sequence: reading.events.first.map { $0.sequence - 1 } ?? reading.position, name: "reset",
                        data: APIEncoding.reset(reason: "this client fell behind the event log"))
                    text += reset.framed(epoch: log.epoch)
                }
                for event in reading.events where event.name == "reset" || selected.contains(event.name) {
                    text += event.framed(
                        epoch: log.epoch, summary: summary && !fullHosts.contains(event.host ?? ""))
                }
                position = reading.position
                if text.isEmpty, lastWrite.duration(to: .now) >= keepAlive {
                    text = ": keep-alive\n\n"
                }
                if !text.isEmpty {
                    try await writer.write(ByteBuffer(string: text))
                    lastWrite = .now
                }
            }
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store",
                HTTPField.Name("X-Accel-Buffering")!: "no",
            ], body: body)
    }
}
