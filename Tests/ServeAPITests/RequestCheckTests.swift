import Foundation
import ServeAPI
import Storage
import Testing

@Suite struct RequestCheckTests {
    @Test func queryParametersAreDecodedAndUnknownOrRepeatedOnesRefused() throws {
        let query = try QueryParameters(
            "since=2h&name=collect%20snapshot&host=web+1", allowed: ["since", "name", "host"])
        #expect(query["name"] == "collect snapshot")
        #expect(query["host"] == "web 1")
        #expect(throws: APIError.self) { try QueryParameters("sinse=2h", allowed: ["since"]) }
        #expect(throws: APIError.self) { try QueryParameters("since=1h&since=2h", allowed: ["since"]) }
        #expect(throws: APIError.self) { try QueryParameters("since=%ZZ", allowed: ["since"]) }
        #expect(throws: APIError.self) { try QueryParameters("since=%C3%28", allowed: ["since"]) }
    }

    @Test func aHugeQueryIsRefusedBeforeItIsRead() {
        let huge = "since=" + String(repeating: "a", count: 10_000)
        do {
            _ = try QueryParameters(huge, allowed: ["since"])
            Issue.record("a 10 kB query was read")
        } catch {
            #expect(error.status == 414)
        }
        let many = (1...40).map { "p\($0)=1" }.joined(separator: "&")
        #expect(throws: APIError.self) { try QueryParameters(many, allowed: Set((1...40).map { "p\($0)" })) }
    }

    @Test func historyRequestsReadTimesLimitsAndCursors() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let request = try HistoryRequest(host: "web1", query: "since=2h&until=2027-01-15T08:00:00Z&limit=50", now: now)
        #expect(request.page.since == now.addingTimeInterval(-7200))
        #expect(request.page.limit == 50)
        #expect(request.query.hosts == .exact(["web1"]))
        let cursor = try #require(HistoryCursor(token: "1795600000123.42"))
        #expect(cursor.token == "1795600000123.42")
        #expect(try HistoryRequest(host: "web1", query: "cursor=1795600000123.42").cursor == cursor)
        #expect(request.stepMilliseconds == nil && request.query.stepMilliseconds == nil)
        #expect(
            try HistoryRequest(host: "web1", query: "since=7d&step=10m", now: now).query.stepMilliseconds == 600_000)
        for bad in [
            "limit=0", "limit=5000", "limit=ten", "since=yesterday", "cursor=abc", "since=1h&until=2h", "step=0s",
            "step=500ms", "step=2d", "step=often",
        ] {
            #expect(throws: APIError.self, "\(bad)") { try HistoryRequest(host: "web1", query: bad, now: now) }
        }
    }

    @Test func spanRequestsNarrowByHostNameKindAndStatus() throws {
        let request = try SpanListRequest(query: "host=web1&name=exec&kind=ssh&status=error&limit=20")
        #expect(request.filter.host == "web1")
        #expect(request.filter.namePrefix == "exec")
        #expect(request.filter.kind == "ssh")
        #expect(request.filter.errorsOnly)
        #expect(request.filter.limit == 20)
        #expect(throws: APIError.self) { try SpanListRequest(query: "status=broken") }
    }

    @Test func probeTargetsMustBeNamed() throws {
        #expect(try ProbeRequest(query: "target=web1").target == "web1")
        #expect(throws: APIError.self) { try ProbeRequest(query: nil) }
        #expect(throws: APIError.self) { try ProbeRequest(query: "target=") }
        #expect(throws: APIError.self) { try ProbeRequest(query: "target=web1%0Aevil") }
        #expect(throws: APIError.self) { try ProbeRequest(query: "target=web1&module=x") }
    }

    @Test func theBearerTokenIsCheckedWholeAndTheSchemeInAnyCase() throws {
        let text = "0123456789abcdef0123456789abcdef"
        let token = try BearerToken(fileText: "  \(text)  \r\nsecond line\n")
        #expect(token.admits(authorization: "Bearer \(text)"))
        #expect(token.admits(authorization: "bearer \(text)"))
        #expect(!token.admits(authorization: "Bearer \(text.dropLast())"))
        #expect(!token.admits(authorization: "Bearer \(text)4"))
        #expect(!token.admits(authorization: "Basic \(text)"))
        #expect(!token.admits(authorization: nil))
        #expect(!token.admits(authorization: "Bearer "))
    }

    @Test func theTokenIsTheFirstLineOfThirtyTwoCharactersOrMore() {
        #expect(throws: BearerToken.Problem.tooShort(length: 5)) { try BearerToken(fileText: "short\n") }
        // Sixteen characters were once enough; the documented minimum is 32.
        #expect(throws: BearerToken.Problem.tooShort(length: 20)) {
            try BearerToken(fileText: "0123456789abcdef0123\n")
        }
        #expect(throws: BearerToken.Problem.emptyFirstLine) { try BearerToken(fileText: "") }
        // A token on the second line is not looked for: the empty first line is the mistake reported.
        #expect(throws: BearerToken.Problem.emptyFirstLine) {
            try BearerToken(fileText: "\n0123456789abcdef0123456789abcdef\n")
        }
        #expect(throws: BearerToken.Problem.emptyFirstLine) {
            try BearerToken(fileText: "  \t\r\n0123456789abcdef0123456789abcdef\n")
        }
    }

    @Test func eachClientGetsABurstThenItsRate() {
        var limiter = RequestRateLimiter(ratePerSecond: 2, burst: 3)
        #expect((1...3).allSatisfy { _ in limiter.admit(client: "a", now: 0).admitted })
        let refused = limiter.admit(client: "a", now: 0)
        #expect(!refused.admitted)
        #expect(refused.retryAfterSeconds == 1)
        // Another client is not held up by the first.
        #expect(limiter.admit(client: "b", now: 0).admitted)
        // Half a second later one more request is allowed.
        #expect(limiter.admit(client: "a", now: 0.5).admitted)
        #expect(!limiter.admit(client: "a", now: 0.5).admitted)
    }

    @Test(arguments: ["bogus", "SNAPSHOT", ""])
    func anUnknownSpanKindIsRefused(kind: String) {
        do {
            _ = try SpanListRequest(query: "kind=\(kind)")
            Issue.record("kind=\(kind) was accepted")
        } catch {
            #expect(error.status == 400)
            #expect(error.message.contains("snapshot"))
        }
    }

    @Test func everySpanKindIsAccepted() throws {
        for kind in ["snapshot", "ssh", "sftp", "http", "chat", "tool", "exec", "other"] {
            #expect(try SpanListRequest(query: "kind=\(kind)").filter.kind == kind)
        }
    }

    @Test(arguments: [
        ("1e300", 10.0), ("inf", 10.0), ("9.3e15", 10.0), ("nan", 10.0), ("-1", 10.0), ("-inf", 10.0),
        ("garbage", 10.0), ("0.4", 10.0), ("3", 2.5), ("0.5000001", 0.0000001),
    ])
    func theScrapeTimeoutHeaderGivesAWaitFromZeroToTheStandardOne(header: String, seconds: Double) {
        let wait = ProbeRequest.firstRecordWait(scrapeTimeout: header, standard: .seconds(10))
        let expected = Duration.nanoseconds(Int64(seconds * 1e9))
        #expect(wait - expected < .microseconds(1) && expected - wait < .microseconds(1), "\(header): \(wait)")
    }
}
