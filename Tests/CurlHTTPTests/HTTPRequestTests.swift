import CurlHTTP
import Testing

@Suite("HTTPRequest")
struct HTTPRequestTests {
    @Test(
        "The redacted URL hides userinfo and query values and drops the fragment",
        arguments: [
            ("https://api.openai.com/v1/chat/completions", "https://api.openai.com/v1/chat/completions"),
            ("http://user:pw@127.0.0.1:4318/v1/traces", "http://REDACTED:REDACTED@127.0.0.1:4318/v1/traces"),
            ("https://token@example.com", "https://REDACTED@example.com/"),
            ("https://example.com/s?key=abc&q=&flag#frag", "https://example.com/s?key=REDACTED&q=&REDACTED"),
            ("HTTP://[::1]:8080/x?a=1", "http://[::1]:8080/x?a=REDACTED"),
        ])
    func redactedURL(url: String, expected: String) {
        #expect(HTTPRequest(url: url).redactedURL == expected)
    }

    @Test("A URL that does not parse is still cut before its userinfo and query")
    func unparsableURLIsRedacted() {
        let request = HTTPRequest(url: "htp://user:pw@host/x?token=abc")
        #expect(!request.redactedURL.contains("pw"))
        #expect(!request.redactedURL.contains("abc"))
    }

    @Test("Server address and port come from the URL, the port from the scheme when absent")
    func serverAddress() {
        #expect(HTTPRequest(url: "https://api.anthropic.com/v1/messages").serverAddress == "api.anthropic.com")
        #expect(HTTPRequest(url: "https://api.anthropic.com/v1/messages").serverPort == 443)
        #expect(HTTPRequest(url: "http://localhost:11434/v1").serverPort == 11434)
        #expect(HTTPRequest(url: "http://[::1]/").serverAddress == "::1")
        #expect(HTTPRequest(url: "http://[::1]/").serverPort == 80)
        #expect(HTTPRequest(url: "not a url").serverAddress == nil)
    }

    @Test("The description is the method and redacted URL; the debug form adds redacted headers and body size")
    func descriptions() {
        let request = HTTPRequest.postJSON(
            url: "https://example.com/v1?api_key=k-123", json: #"{"a":1}"#, headers: ["x-api-key": "k-456"])
        #expect(request.description == "POST https://example.com/v1?api_key=REDACTED")
        #expect(
            request.debugDescription
                == "POST https://example.com/v1?api_key=REDACTED [x-api-key: REDACTED, Content-Type: application/json] "
                + "body: 7 bytes")
    }
}
