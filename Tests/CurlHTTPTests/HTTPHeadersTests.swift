import CurlHTTP
import Testing

@Suite("HTTPHeaders")
struct HTTPHeadersTests {
    @Test("Lookup ignores case and keeps every value of a repeated name in order")
    func caseInsensitiveLookup() {
        var headers: HTTPHeaders = ["Accept": "text/event-stream", "X-Tag": "a"]
        headers.add(name: "x-tag", value: "b")
        #expect(headers["accept"] == "text/event-stream")
        #expect(headers["X-TAG"] == "a")
        #expect(headers.values(for: "X-Tag") == ["a", "b"])
        #expect(headers.contains(name: "ACCEPT"))
        #expect(headers.count == 3)
    }

    @Test("Replacing a name leaves one field in the first one's place, and removing drops them all")
    func replaceAndRemove() {
        var headers: HTTPHeaders = ["A": "1", "B": "2", "a": "3", "C": "4"]
        headers.replaceOrAdd(name: "a", value: "9")
        #expect(headers.map(\.name) == ["a", "B", "C"])
        #expect(headers["A"] == "9")
        headers.replaceOrAdd(name: "D", value: "5")
        #expect(headers.map(\.value) == ["9", "2", "4", "5"])
        headers.remove(name: "b")
        #expect(!headers.contains(name: "B"))
    }

    @Test("A field added as secret is redacted whatever its name, and its value is listed for scrubbing")
    func secretField() {
        var headers = HTTPHeaders()
        headers.add(name: "x-honeycomb-team", value: "hc-team-1", secret: true)
        headers.add(name: "X-Title", value: "hostscope")
        var dumped = ""
        dump(headers, to: &dumped)
        for text in [headers.description, headers.debugDescription, "\(headers)", dumped] {
            #expect(!text.contains("hc-team-1"), "\(text)")
            #expect(text.contains("x-honeycomb-team: REDACTED"), "\(text)")
            #expect(text.contains("X-Title: hostscope"), "\(text)")
        }
        #expect(headers["x-honeycomb-team"] == "hc-team-1")
        #expect(headers.secretFields.map(\.value) == ["hc-team-1"])
        #expect(headers.secretFields.map(\.name) == ["x-honeycomb-team"])
    }

    @Test("Credential headers are redacted in every printed form while lookups keep the real value")
    func redaction() {
        let headers: HTTPHeaders = [
            "Authorization": "Bearer sk-live-1", "x-api-key": "ak-2", "Cookie": "sid=3", "X-Auth-Token": "t-4",
            "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "Content-Type": "application/json",
        ]
        var dumped = ""
        dump(headers, to: &dumped)
        for text in [headers.description, headers.debugDescription, "\(headers)", dumped] {
            for secret in ["sk-live-1", "ak-2", "sid=3", "t-4"] {
                #expect(!text.contains(secret), "\(text)")
            }
            #expect(text.contains("traceparent: 00-0af7651916cd43dd8448eb211c80319c"), "\(text)")
            #expect(text.contains("Content-Type: application/json"), "\(text)")
        }
        #expect(headers["authorization"] == "Bearer sk-live-1")
        #expect(HTTPHeaders.isSecret(name: "Proxy-Authorization"))
        #expect(HTTPHeaders.isSecret(name: "X-Goog-Api-Key"))
        #expect(!HTTPHeaders.isSecret(name: "traceparent"))
        #expect(!HTTPHeaders.isSecret(name: "Retry-After"))
    }
}
