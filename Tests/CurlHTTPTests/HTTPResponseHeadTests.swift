import CurlHTTP
import Foundation
import Testing

@Suite("HTTPResponseHead")
struct HTTPResponseHeadTests {
    let now = Date(timeIntervalSince1970: 1_445_412_480)  // Wed, 21 Oct 2015 07:28:00 GMT

    @Test("Retry-After in seconds is read as a delay")
    func retryAfterSeconds() {
        let head = HTTPResponseHead(status: 429, headers: ["Retry-After": " 120 "])
        #expect(head.retryAfter(now: now) == .seconds(120))
    }

    @Test("Retry-After as an HTTP date is the time left until then, and zero once past")
    func retryAfterDate() {
        let later = HTTPResponseHead(status: 503, headers: ["Retry-After": "Wed, 21 Oct 2015 07:28:30 GMT"])
        #expect(later.retryAfter(now: now) == .seconds(30))
        let past = HTTPResponseHead(status: 503, headers: ["Retry-After": "Wed, 21 Oct 2015 07:00:00 GMT"])
        #expect(past.retryAfter(now: now) == .zero)
    }

    @Test("A missing or unreadable Retry-After gives nil")
    func retryAfterMissing() {
        #expect(HTTPResponseHead(status: 429).retryAfter(now: now) == nil)
        #expect(HTTPResponseHead(status: 429, headers: ["Retry-After": "soon"]).retryAfter(now: now) == nil)
        #expect(HTTPResponseHead(status: 429, headers: ["Retry-After": "-5"]).retryAfter(now: now) == nil)
    }

    @Test("Content-Length is read when valid, and success means 2xx")
    func contentLengthAndSuccess() {
        #expect(HTTPResponseHead(status: 200, headers: ["Content-Length": "42"]).contentLength == 42)
        #expect(HTTPResponseHead(status: 200, headers: ["Content-Length": "x"]).contentLength == nil)
        #expect(HTTPResponseHead(status: 204).isSuccess)
        #expect(!HTTPResponseHead(status: 301).isSuccess)
    }
}
