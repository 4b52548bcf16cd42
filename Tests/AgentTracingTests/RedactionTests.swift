import AgentTracing
import OrderedJSON
import Testing
import Tracing

@Suite struct RedactionTests {
    @Test(arguments: [
        ("https://admin:hunter2@api.example.com:8443/v1/x?y=1", "https://api.example.com:8443/v1/x?y=1"),
        ("https://token@git.example.com/repo.git", "https://git.example.com/repo.git"),
        ("https://api.example.com/v1?api_key=abc&model=m", "https://api.example.com/v1?api_key=REDACTED&model=m"),
        (
            "https://s3.example.com/o?X-Amz-Signature=ff&X-Amz-Credential=cc&part=2",
            "https://s3.example.com/o?X-Amz-Signature=REDACTED&X-Amz-Credential=REDACTED&part=2"
        ),
        ("https://a.example.com/cb#access_token=xyz&state=s", "https://a.example.com/cb#access_token=REDACTED&state=s"),
        (
            "https://a.example.com/p?ACCESS%5FTOKEN=1&Sig=2&key=3&author=me",
            "https://a.example.com/p?ACCESS%5FTOKEN=REDACTED&Sig=REDACTED&key=REDACTED&author=me"
        ),
        ("http://u:p@[::1]:4318/v1/traces", "http://[::1]:4318/v1/traces"),
        ("/v1/chat?password=x", "/v1/chat?password=REDACTED"),
        ("https://example.com/plain#section", "https://example.com/plain#section"),
    ])
    func urlsLoseUserinfoAndCredentialParameters(url: String, expected: String) {
        #expect(Redaction.url(url) == expected)
    }

    @Test func sensitiveHeadersAreRecognisedWhateverTheirCase() {
        for name in [
            "Authorization", "PROXY-AUTHORIZATION", "x-api-key", "Api-Key", "Cookie", "Set-Cookie",
            "X-Auth-Token", "x-goog-api-key",
        ] {
            #expect(Redaction.isSensitiveHeader(name), "\(name)")
        }
        for name in ["Content-Type", "Accept", "User-Agent", "traceparent", "x-request-id"] {
            #expect(!Redaction.isSensitiveHeader(name), "\(name)")
        }
    }

    @Test func headerListsKeepNamesAndOrderButNotCredentials() {
        let headers = [(name: "Accept", value: "text/event-stream"), (name: "Authorization", value: "Bearer sk-1")]
        #expect(
            Redaction.headers(headers).map { "\($0.name)=\($0.value)" } == [
                "Accept=text/event-stream", "Authorization=REDACTED",
            ])
        let attributes = Redaction.headerAttributes(headers + [(name: "accept", value: "application/json")])
        #expect(
            attributes == [
                Attribute("http.request.header.accept", .stringArray(["text/event-stream", "application/json"])),
                Attribute("http.request.header.authorization", .stringArray(["REDACTED"])),
            ])
    }

    @Test func attributeKeysDecideWhatIsCleaned() {
        #expect(
            Redaction.attributeValue(key: "url.full", "https://u:p@h/x?token=1")
                == .string("https://h/x?token=REDACTED"))
        #expect(Redaction.attributeValue(key: "url.query", "a=1&secret=2") == .string("a=1&secret=REDACTED"))
        #expect(
            Redaction.attributeValue(key: "http.request.header.x-api-key", .stringArray(["k"]))
                == .stringArray(["REDACTED"]))
        #expect(
            Redaction.attributeValue(key: "http.response.header.content-type", .stringArray(["a/b"]))
                == .stringArray(["a/b"]))
        #expect(Redaction.attributeValue(key: "ssh.key.passphrase", "pp") == .string("REDACTED"))
        #expect(Redaction.attributeValue(key: "db.Password", "pp") == .string("REDACTED"))
        #expect(Redaction.attributeValue(key: "gen_ai.usage.input_tokens", 12) == .int(12))
        #expect(Redaction.attributeValue(key: "process.exit.code", 1) == .int(1))
        #expect(Redaction.attributeValue(key: "server.address", "web1") == .string("web1"))
    }

    @Test func aMarkerSecretSetThroughEveryInputPathNeverReachesAnyOutput() throws {
        // Registered: reaches spans as free text. Unregistered: only through URL, header and key rules.
        let registered = "Mk-9f2/+=x@Q"
        let unregistered = "Uq-77c1e0d9"
        let (tracer, _) = SampleTraces.tracer(secrets: [registered])

        try? tracer.withSpan("ssh connect as \(registered)", ofKind: .client) { span in
            span.setAttribute(
                "url.full", "https://admin:\(unregistered)@api.example.com/v1?api_key=\(unregistered)&m=1")
            span.setAttribute("url.full", "https://user:\(registered)@api.example.com/v1?token=\(registered)")
            span.setAttribute("http.url", "https://api.example.com/v1#access_token=\(unregistered)")
            span.setAttribute("url.query", "signature=\(unregistered)")
            for attribute in Redaction.headerAttributes([
                (name: "Authorization", value: "Bearer \(unregistered)"), (name: "x-api-key", value: unregistered),
                (name: "Cookie", value: "session=\(unregistered)"),
            ]) {
                span.setAttribute(attribute.key, attribute.value)
            }
            span.setAttribute("http.request.header.authorization", ["Basic \(unregistered)"])
            span.setAttribute("ssh.key.passphrase", unregistered)
            span.setAttribute("llm.api_key", .stringArray([unregistered]))
            span.setAttribute("process.command_args", ["sshpass", "-p", registered, "ssh", "web1"])
            span.setAttribute(
                "note", "password is \(registered), encoded p=\(registered.addingPercentEncodingForTest())")
            span.attributes["dictionary"] = "through SpanAttributes: \(registered)"
            span.operationName = "renamed with \(registered)"
            span.addEvent(
                "stderr \(registered)", attributes: [Attribute("line", .string("Permission denied for \(registered)"))])
            span.addEvent(SpanEvent(name: "library", attributes: ["k": "\(registered)"]))
            span.addLink(to: span.spanContext, attributes: [Attribute("why", .string(registered))])
            span.setStatus(.error, message: "auth failed with \(registered)")
            struct Leaky: Error, CustomStringConvertible {
                var secret: String
                var description: String { "rejected \(secret)" }
            }
            throw Leaky(secret: registered)
        }

        let spans = tracer.finishedSpans()
        #expect(spans.count == 1)
        let otlp = String(decoding: OTLPJSONEncoder(scope: SampleTraces.scope).encode(spans), as: UTF8.self)
        let flat = String(decoding: FlatSpanEncoder().encode(spans), as: UTF8.self)
        let decoded = try FinishedSpan(flatJSONLine: SampleTraces.lines(Array(flat.utf8))[0])
        let outputs = [otlp, flat, String(describing: spans), String(describing: decoded)]
        for output in outputs {
            for secret in [registered, unregistered, registered.addingPercentEncodingForTest()] {
                #expect(!output.contains(secret), "a secret reached an output: \(output)")
            }
        }
        // The values are still there, redacted, so the spans stay useful.
        // The secret's "/" ends the URL's authority early, so the scrubber (not the userinfo rule) hides it.
        #expect(otlp.contains("https://user:REDACTED@api.example.com/v1?token=REDACTED"))
        #expect(flat.contains("\"note\":\"password is REDACTED, encoded p=REDACTED\""))
        #expect(spans[0].name == "renamed with REDACTED")
        #expect(spans[0].events.last?.attributes["exception.message"] == .string("rejected REDACTED"))
    }
}

@Suite struct SecretScrubberTests {
    @Test func registeredSecretsAreReplacedWhereverTheyOccur() {
        let scrubber = SecretScrubber(secrets: ["pa55", "", "pa55word"])
        #expect(scrubber.scrub("pa55word and pa55 and pa55pa55") == "REDACTED and REDACTED and REDACTEDREDACTED")
        #expect(scrubber.scrub("nothing here") == "nothing here")
        #expect(scrubber.scrub(.stringArray(["-p", "pa55"])) == .stringArray(["-p", "REDACTED"]))
        #expect(scrubber.scrub(.int(55)) == .int(55))
    }

    /// A credential header's value whatever its length; any other header's value from 8 characters (an API
    /// key under any name); not a short tenant or routing value, which would redact every `1` of every span.
    @Test func anOTLPEndpointCountsTheHeaderValuesThatMayBeCredentialsAsSecrets() throws {
        let endpoint = try OTLPEndpoint(
            "https://collector:pw1@otlp.example.com/?token=t2&region=eu",
            headers: [
                ("x-honeycomb-team", "hcteamkey3"), ("X-Scope-OrgID", "1"), ("x-tenant", "ops"),
                ("x-tenant-name", "tenant 4"), ("Authorization", "Bearer b5"), ("x-api-key", "k6"),
                ("X-SF-Token", "t7"),
            ])
        #expect(Set(endpoint.secrets) == ["pw1", "t2", "hcteamkey3", "tenant 4", "Bearer b5", "b5", "k6", "t7"])
        #expect(Redaction.urlSecrets("https://example.com/?region=eu").isEmpty)
        let scrubber = SecretScrubber(secrets: endpoint.secrets)
        #expect(
            scrubber.scrub("web1: cannot connect to 127.0.0.1 port 1") == "web1: cannot connect to 127.0.0.1 port 1")
        #expect(scrubber.scrub("sent hcteamkey3 and k6") == "sent REDACTED and REDACTED")
    }

    @Test func percentEncodedFormsAreFoundInEitherCase() {
        let scrubber = SecretScrubber()
        #expect(scrubber.isEmpty)
        scrubber.register("a b/c")
        #expect(!scrubber.isEmpty)
        #expect(scrubber.scrub("q=a%20b%2Fc&r=a%20b%2fc") == "q=REDACTED&r=REDACTED")
    }

    @Test func secretsRegisteredLaterApplyFromThenOn() {
        let scrubber = SecretScrubber(secrets: ["first-secret"])
        #expect(scrubber.scrub("second-secret") == "second-secret")
        scrubber.register("second-secret")
        scrubber.register("second-secret")
        #expect(scrubber.scrub("first-secret second-secret") == "REDACTED REDACTED")
    }

    @Test func nonAsciiSecretsAreMatchedOnTheirBytes() {
        let scrubber = SecretScrubber(secrets: ["clé-€"])
        #expect(scrubber.scrub("la clé-€ est là") == "la REDACTED est là")
    }
}

extension String {
    /// RFC 3986 percent-encoding, written out here so the test does not share the scrubber's code.
    func addingPercentEncodingForTest() -> String {
        var output = ""
        for byte in utf8 {
            if (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte)
                || "-._~".utf8.contains(byte)
            {
                output.append(Character(Unicode.Scalar(byte)))
            } else {
                output += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return output
    }

    func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
