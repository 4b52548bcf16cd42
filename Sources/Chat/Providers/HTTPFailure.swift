import AgentTracing
import CurlHTTP
import Foundation
import OrderedJSON

/// Turns HTTP failures into chat errors that say what to do.
struct HTTPFailure {
    let configuration: ProviderConfiguration
    let model: String

    private var provider: String { configuration.kind.displayName }
    private var keyHint: String {
        if let key = configuration.apiKey {
            return "check \(key.origin)"
        }
        if let variable = configuration.kind.apiKeyVariable {
            return "no API key was sent: set \(variable), name a variable with --api-key-env or use a credentials file"
        }
        return "no API key was sent: name a variable with --api-key-env or use a credentials file"
    }

    /// An answer with a non-2xx status.
    func error(for head: HTTPResponseHead, body: [UInt8]) -> ChatError {
        let detail = serverMessage(body).map { ": \($0)" } ?? ""
        let status = head.status
        let url = HTTPRequest(url: configuration.endpointURL).redactedURL
        switch status {
        case 401, 403:
            let what = status == 401 ? "refused the API key" : "denied access with the API key"
            return ChatError(
                kind: .auth, message: "\(capitalized) \(what) (HTTP \(status)\(detail)); \(keyHint)",
                httpStatus: status)
        case 404:
            return ChatError(
                kind: .modelNotFound,
                message: "\(capitalized) does not know the model \"\(model)\" at \(url) (HTTP 404\(detail)); check the "
                    + "model name, and that --base-url follows the provider's convention (OpenAI-compatible ones end "
                    + "in /v1)",
                httpStatus: status)
        case 429:
            let retryAfter = head.retryAfter()
            let when = retryAfter.map { "retry in \(ChatError.wholeSeconds($0)) s" } ?? "retry in a moment"
            return ChatError(
                kind: .rateLimited, message: "\(capitalized) is rate limiting requests (HTTP 429\(detail)); \(when)",
                retryAfter: retryAfter, httpStatus: status)
        case 500...:
            return ChatError(
                kind: .server,
                message: "\(capitalized) failed with HTTP \(status)\(detail); this is on the provider's side, "
                    + "use /retry in a moment",
                retryAfter: head.retryAfter(), httpStatus: status)
        default:
            return ChatError(
                kind: .badRequest, message: "\(capitalized) rejected the request with HTTP \(status)\(detail)",
                httpStatus: status)
        }
    }

    /// A transport failure before any answer arrived.
    func error(beforeResponse error: HTTPError) -> ChatError {
        switch error.code {
        case .connect, .resolve:
            return ChatError(
                kind: .connect,
                message: "could not reach \(provider): \(error.message); check --base-url and that the server is up")
        case .timeout:
            return ChatError(kind: .timeout, message: "\(capitalized) did not answer in time: \(error.message)")
        case .invalidRequest:
            return ChatError(kind: .configuration, message: error.message)
        default:
            return ChatError(kind: .network, message: "the request to \(provider) failed: \(error.message)")
        }
    }

    /// A transport failure while the stream was being read; the decoder keeps the text so far.
    func error(duringStream error: HTTPError) -> ChatError {
        switch error.code {
        case .timeout:
            return ChatError(
                kind: .timeout,
                message: "\(capitalized) fell silent mid-answer: \(error.message); the text so far is kept, use /retry "
                    + "to ask again")
        default:
            return ChatError(
                kind: .truncated,
                message: "the stream from \(provider) broke off: \(error.message); the text so far is kept, use /retry "
                    + "to ask again")
        }
    }

    private var capitalized: String {
        configuration.kind == .gateway ? "The gateway" : provider
    }

    /// The provider's own explanation from an error body (`{"error": {"message": …}}` for all four), scrubbed
    /// of the key and the user's header values, and shortened.
    private func serverMessage(_ body: [UInt8]) -> String? {
        guard !body.isEmpty else {
            return nil
        }
        var text: String
        if let json = try? JSONParser.parse(bytes: body),
            let message = json["error"]?["message"]?.stringValue ?? json["message"]?.stringValue
                ?? json["error"]?.stringValue
        {
            text = message
        } else {
            text = String(decoding: body.prefix(600), as: UTF8.self)
        }
        text = configuration.serverTextScrubber?.scrub(text) ?? text
        text = text.split(whereSeparator: \.isNewline).joined(separator: " ").trimmingCharacters(in: .whitespaces)
        if text.count > 300 {
            text = String(text.prefix(300)) + "…"
        }
        return text.isEmpty ? nil : text
    }
}
