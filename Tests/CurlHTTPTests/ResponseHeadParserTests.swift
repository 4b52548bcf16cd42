import Testing

@testable import CurlHTTP

@Suite("ResponseHeadParser")
struct ResponseHeadParserTests {
    func feed(_ lines: [String]) -> (heads: [HTTPResponseHead], parser: ResponseHeadParser) {
        var parser = ResponseHeadParser()
        var heads: [HTTPResponseHead] = []
        for line in lines {
            if let head = parser.consume(Array(line.utf8)) {
                heads.append(head)
            }
        }
        return (heads, parser)
    }

    @Test("A head completes at the empty line, with status, reason, version and headers in order")
    func simpleHead() {
        let (heads, parser) = feed([
            "HTTP/1.1 429 Too Many Requests\r\n", "Retry-After: 3\r\n", "Content-Type:text/plain\r\n",
            "X-Dup: a\r\n", "x-dup: b\r\n", "\r\n",
        ])
        #expect(heads.count == 1)
        #expect(parser.isComplete)
        let head = heads[0]
        #expect(head.status == 429)
        #expect(head.reason == "Too Many Requests")
        #expect(head.version == "HTTP/1.1")
        #expect(head.headers["retry-after"] == "3")
        #expect(head.headers["Content-Type"] == "text/plain")
        #expect(head.headers.values(for: "X-Dup") == ["a", "b"])
    }

    @Test("Interim 1xx responses are skipped and the final one is delivered")
    func interimResponses() {
        let (heads, _) = feed([
            "HTTP/1.1 100 Continue\r\n", "\r\n", "HTTP/1.1 200 OK\r\n", "Content-Length: 2\r\n", "\r\n",
        ])
        #expect(heads.map(\.status) == [200])
        #expect(heads.first?.headers["content-length"] == "2")
    }

    @Test("HTTP/2 status lines without a reason, LF-only lines and folded values are read")
    func lenientForms() {
        let (heads, _) = feed(["HTTP/2 200\n", "x-long: part one\n", "  part two\n", "\n"])
        #expect(heads.first?.version == "HTTP/2")
        #expect(heads.first?.reason == "")
        #expect(heads.first?.headers["x-long"] == "part one part two")
    }

    @Test("Trailer lines after the head are not part of it")
    func trailersIgnored() {
        let (heads, parser) = feed(["HTTP/1.1 200 OK\r\n", "\r\n", "X-Trailer: late\r\n", "\r\n"])
        #expect(heads.count == 1)
        #expect(heads[0].headers.isEmpty)
        #expect(parser.isComplete)
    }
}
