internal import CCurl
public import Foundation
import ValueFormats

/// The status line and headers of a response, available as soon as the server has sent them.
public struct HTTPResponseHead: Sendable, Hashable, CustomStringConvertible {
    /// The status code, e.g. 200 or 429.
    public var status: Int
    /// The reason phrase, empty under HTTP/2.
    public var reason: String
    /// The protocol of the response, e.g. `HTTP/1.1` or `HTTP/2`.
    public var version: String
    /// The response headers, in the order received.
    public var headers: HTTPHeaders

    /// Creates a response head.
    public init(status: Int, reason: String = "", version: String = "HTTP/1.1", headers: HTTPHeaders = [:]) {
        self.status = status
        self.reason = reason
        self.version = version
        self.headers = headers
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// The declared `Content-Length`, when present and valid.
    public var contentLength: Int? {
        headers["Content-Length"].flatMap { Int($0.trimmingBlanks()) }.flatMap {
            $0 >= 0 ? $0 : nil
        }
    }

    /// How long the server asks the client to wait before retrying, from `Retry-After` (delay-seconds or an
    /// HTTP-date relative to `now`); `nil` when absent or unreadable. A date in the past gives zero.
    public func retryAfter(now: Date = Date()) -> Duration? {
        guard let text = headers["Retry-After"]?.trimmingBlanks(), !text.isEmpty else {
            return nil
        }
        if text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            return Int64(text).map { .seconds($0) }
        }
        let when = text.withCString { curl_getdate($0, nil) }
        guard when >= 0 else {
            return nil
        }
        let seconds = Double(when) - now.timeIntervalSince1970
        return seconds > 0 ? .milliseconds(Int64(clamping: seconds * 1000, rounding: .up)) : .zero
    }

    /// `HTTP/1.1 429 Too Many Requests [headers]`, with secret header values redacted.
    public var description: String {
        "\(version) \(status)\(reason.isEmpty ? "" : " " + reason) \(headers)"
    }
}

/// A response whose body was collected in memory, up to a cap.
public struct HTTPResponse: Sendable {
    /// The status line and headers.
    public var head: HTTPResponseHead
    /// The whole body.
    public var body: [UInt8]

    /// Creates a response.
    public init(head: HTTPResponseHead, body: [UInt8]) {
        self.head = head
        self.body = body
    }

    /// The status code.
    public var status: Int { head.status }
    /// The response headers.
    public var headers: HTTPHeaders { head.headers }
    /// The body decoded as UTF-8, with invalid sequences replaced.
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// A response whose body is read as it arrives.
///
/// Dropping the response (and every iterator of its body) before the body ends cancels the transfer.
public struct HTTPStreamingResponse: Sendable {
    /// The status line and headers.
    public let head: HTTPResponseHead
    /// The body, as chunks in arrival order.
    public let body: HTTPBody

    /// The status code.
    public var status: Int { head.status }
    /// The response headers.
    public var headers: HTTPHeaders { head.headers }
}
