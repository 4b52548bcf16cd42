public import CurlHTTP
public import OrderedJSON

/// The totals of a gateway session, from `GET /v1/chat/completions/{session_id}/status`.
public struct GatewaySessionStatus: Sendable, Equatable {
    /// The session.
    public var sessionID: String
    /// What the gateway says the session is doing (`running`, `completed`, `stopped`), when it says.
    public var state: String?
    /// Input tokens used by the session so far.
    public var inputTokens: Int?
    /// Output tokens used by the session so far.
    public var outputTokens: Int?
    /// The cost so far in US dollars.
    public var totalCost: Double?
    /// The whole answer, for fields this type does not name.
    public var raw: JSONValue
}

extension ChatProvider {
    /// Asks the gateway for a session's totals.
    public func gatewayStatus(sessionID: String, using client: HTTPClient) async throws(ChatError)
        -> GatewaySessionStatus
    {
        let response = try await gatewayCall(.get, sessionID: sessionID, suffix: "/status", using: client)
        let json = (try? JSONParser.parse(bytes: response.body)) ?? .null
        return GatewaySessionStatus(
            sessionID: json["session_id"]?.stringValue ?? sessionID,
            state: json["status"]?.stringValue ?? json["state"]?.stringValue,
            inputTokens: json["input_tokens"]?.intValue, outputTokens: json["output_tokens"]?.intValue,
            totalCost: json["total_cost"]?.doubleValue, raw: json)
    }

    /// Asks the gateway to stop a running session (`DELETE /v1/chat/completions/{session_id}`).
    public func stopGatewaySession(sessionID: String, using client: HTTPClient) async throws(ChatError) {
        _ = try await gatewayCall(.delete, sessionID: sessionID, suffix: "", using: client)
    }

    private func gatewayCall(
        _ method: HTTPMethod, sessionID: String, suffix: String, using client: HTTPClient
    ) async throws(ChatError) -> HTTPResponse {
        guard kind == .gateway else {
            throw ChatError(kind: .invalidState, message: "\(kind.displayName) has no session endpoints")
        }
        guard !sessionID.isEmpty, sessionID.utf8.allSatisfy(Self.isSessionIDByte) else {
            throw ChatError(kind: .invalidState, message: "\"\(sessionID)\" is not a gateway session id")
        }
        var headers = HTTPHeaders()
        if let key = configuration.apiKey {
            headers.add(name: "Authorization", value: "Bearer \(key.secret)")
        }
        for (name, value) in configuration.extraHeaders {
            headers.replaceOrAdd(name: name, value: value)
        }
        let request = HTTPRequest(
            method: method, url: configuration.endpointURL + "/" + sessionID + suffix, headers: headers,
            timeouts: HTTPTimeouts(connect: configuration.timeouts.connect, idle: .seconds(30), total: .seconds(60)))
        let failure = HTTPFailure(configuration: configuration, model: "")
        let response: HTTPResponse
        do {
            response = try await client.execute(request, maxBodyBytes: configuration.maxErrorBodyBytes)
        } catch {
            throw failure.error(beforeResponse: error)
        }
        guard response.head.isSuccess else {
            if response.status == 404 {
                throw ChatError(
                    kind: .invalidState, message: "the gateway knows no session \(sessionID) (HTTP 404)",
                    httpStatus: 404)
            }
            throw failure.error(for: response.head, body: response.body)
        }
        return response
    }

    private static func isSessionIDByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
            true
        default:
            false
        }
    }
}
