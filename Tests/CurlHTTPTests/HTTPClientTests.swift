import CurlHTTP
import Foundation
import TestSupport
import Testing

@Suite("HTTPClient against a real server on loopback")
struct HTTPClientTests {
    @TaskLocal static var traceMarker: String?

    static func headerMap(_ echo: [String: Any]) -> [String: [String]] {
        var map: [String: [String]] = [:]
        for pair in echo["headers"] as? [[String]] ?? [] where pair.count == 2 {
            map[pair[0].lowercased(), default: []].append(pair[1])
        }
        return map
    }

    // MARK: Requests and responses

    @Test("A JSON POST reaches the server with its method, headers and body intact")
    func jsonPost() async throws {
        try await withTestServer { server, client in
            let request = HTTPRequest.postJSON(
                url: server.baseURL + "/echo?page=2", json: #"{"stream":true}"#, headers: ["X-Probe": "42"])
            let response = try await client.execute(request)
            #expect(response.status == 200)
            let echo = try jsonObject(response.body)
            let headers = Self.headerMap(echo)
            #expect(echo["method"] as? String == "POST")
            #expect(echo["query"] as? String == "page=2")
            #expect(echo["body"] as? String == #"{"stream":true}"#)
            #expect(headers["x-probe"] == ["42"])
            #expect(headers["content-type"] == ["application/json"])
            #expect(headers["user-agent"] == ["hostscope"])
            #expect(headers["expect"] == nil)
        }
    }

    @Test("Binary bodies, empty values and other methods go out as given")
    func methodsAndBinaryBodies() async throws {
        try await withTestServer { server, client in
            let bytes = (0...255).map { UInt8($0) } + (0...255).map { UInt8($0) }
            let put = try await client.execute(
                HTTPRequest(
                    method: .put, url: server.baseURL + "/echo",
                    headers: ["Content-Type": "application/octet-stream", "X-Empty": ""], body: bytes))
            let echo = try jsonObject(put.body)
            #expect(echo["method"] as? String == "PUT")
            #expect(echo["body_base64"] as? String == Data(bytes).base64EncodedString())
            #expect(Self.headerMap(echo)["x-empty"] == [""])

            let delete = try jsonObject(
                try await client.execute(HTTPRequest(method: .delete, url: server.baseURL + "/echo")).body)
            #expect(delete["method"] as? String == "DELETE")
            #expect(delete["body_length"] as? Int == 0)

            let head = try await client.execute(HTTPRequest(method: .head, url: server.baseURL + "/echo"))
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(head.head.contentLength ?? 0 > 0)

            let large = try await client.execute(
                HTTPRequest(method: .head, url: server.baseURL + "/bytes?count=100000"), maxBodyBytes: 10)
            #expect(large.head.contentLength == 100_000)
            #expect(large.body.isEmpty)
        }
    }

    @Test("Headers from the client's hook are computed on the requesting task, and a request's own header wins")
    func additionalHeaders() async throws {
        let configuration = HTTPClient.Configuration(additionalHeaders: { _ in
            var headers = HTTPHeaders()
            if let marker = HTTPClientTests.traceMarker {
                headers.add(name: "traceparent", value: marker)
            }
            headers.add(name: "X-Probe", value: "from-hook")
            return headers
        })
        try await withTestServer(configuration: configuration) { server, client in
            let traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
            let response = try await Self.$traceMarker.withValue(traceparent) {
                try await client.execute(HTTPRequest(url: server.baseURL + "/echo", headers: ["X-Probe": "own"]))
            }
            let headers = Self.headerMap(try jsonObject(response.body))
            #expect(headers["traceparent"] == [traceparent])
            #expect(headers["x-probe"] == ["own"])
        }
    }

    @Test("A 429 is a response whose Retry-After the caller can read")
    func retryAfterStatus() async throws {
        try await withTestServer { server, client in
            let response = try await client.execute(
                HTTPRequest(url: server.baseURL + "/status/429?header=Retry-After:3&body=slow%20down"))
            #expect(response.status == 429)
            #expect(response.head.reason == "Too Many Requests")
            #expect(response.head.retryAfter() == .seconds(3))
            #expect(response.bodyText == "slow down")

            let unavailable = try await client.execute(HTTPRequest(url: server.baseURL + "/status/503"))
            #expect(unavailable.status == 503)
            #expect(unavailable.head.retryAfter() == nil)
        }
    }

    @Test("Many concurrent requests on one client each get their own answer")
    func concurrentRequests() async throws {
        try await withTestServer { server, client in
            try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for index in 0..<24 {
                    group.addTask {
                        let response = try await client.execute(
                            .postJSON(url: server.baseURL + "/echo", json: #"{"index":\#(index)}"#))
                        return (index, try jsonObject(response.body)["body"] as? String)
                    }
                }
                var seen = 0
                for try await (index, body) in group {
                    #expect(body == #"{"index":\#(index)}"#)
                    seen += 1
                }
                #expect(seen == 24)
            }
        }
    }

    // MARK: Streaming

    @Test("A streamed body delivers each frame while the server is still holding back the rest")
    func incrementalStream() async throws {
        try await withTestServer { server, client in
            let timeouts = HTTPTimeouts(idle: .seconds(10))
            let response = try await client.stream(
                HTTPRequest(url: server.baseURL + "/stream?frames=3&gate=1&id=gated", timeouts: timeouts))
            #expect(response.status == 200)
            #expect(response.headers["Content-Type"] == "text/event-stream")
            var iterator = response.body.makeAsyncIterator()
            // The server sends nothing more until the gate opens, so this chunk proves bytes are delivered as
            // they arrive rather than at the end of the body.
            let first = try #require(try await iterator.next())
            #expect(String(decoding: first, as: UTF8.self).contains(#"{"n": 0}"#))

            let opened = try await client.execute(HTTPRequest(method: .post, url: server.baseURL + "/gate/gated"))
            #expect(opened.status == 200)
            var rest: [UInt8] = []
            while let chunk = try await iterator.next() {
                rest += chunk
            }
            let text = String(decoding: rest, as: UTF8.self)
            #expect(text.contains(#"{"n": 2}"#))
            #expect(text.hasSuffix("data: [DONE]\n\n"))
        }
    }

    @Test("A large body read slowly arrives complete and in order")
    func slowReaderBackpressure() async throws {
        let configuration = HTTPClient.Configuration(streamBufferBytes: 32 * 1024)
        try await withTestServer(configuration: configuration) { server, client in
            let count = 3_000_000
            let response = try await client.stream(
                HTTPRequest(url: server.baseURL + "/bytes?count=\(count)&chunked=1&chunk=4096"))
            var offset = 0
            var mismatches = 0
            var chunks = 0
            for try await chunk in response.body {
                for (index, byte) in chunk.enumerated() where byte != UInt8((offset + index) % 251) {
                    mismatches += 1
                }
                offset += chunk.count
                chunks += 1
                if chunks % 16 == 0 {
                    try await Task.sleep(for: .milliseconds(2))
                }
            }
            #expect(offset == count)
            #expect(mismatches == 0)
        }
    }

    @Test("Collecting a body beyond the cap fails with too_large, with or without Content-Length")
    func bodyCap() async throws {
        try await withTestServer { server, client in
            for chunked in [0, 1] {
                let error = await #expect(throws: HTTPError.self) {
                    try await client.execute(
                        HTTPRequest(url: server.baseURL + "/bytes?count=200000&chunked=\(chunked)"),
                        maxBodyBytes: 50_000)
                }
                #expect(error?.code == .tooLarge)
                #expect(error?.message.contains("50000-byte limit") == true)
            }
            let small = try await client.execute(
                HTTPRequest(url: server.baseURL + "/bytes?count=50000&chunked=1"), maxBodyBytes: 50_000)
            #expect(small.body.count == 50_000)
        }
    }

    // MARK: Failures

    @Test("A server that never answers trips the idle timeout")
    func idleTimeoutBeforeHead() async throws {
        try await withTestServer { server, client in
            let timeouts = HTTPTimeouts(idle: .milliseconds(400))
            var thrown: HTTPError?
            let time = await elapsed {
                thrown = await #expect(throws: HTTPError.self) {
                    try await client.execute(HTTPRequest(url: server.baseURL + "/stall", timeouts: timeouts))
                }
            }
            #expect(thrown?.code == .timeout)
            #expect(thrown?.message.contains("no response from 127.0.0.1:\(server.port) within 400 ms") == true)
            #expect(time >= .milliseconds(400))
            #expect(time < .seconds(10))
        }
    }

    @Test("A stream that falls silent mid-body fails after the frames that arrived")
    func idleTimeoutMidBody() async throws {
        try await withTestServer { server, client in
            let response = try await client.stream(
                HTTPRequest(url: server.baseURL + "/stall-body", timeouts: HTTPTimeouts(idle: .milliseconds(400))))
            var iterator = response.body.makeAsyncIterator()
            let first = try await iterator.next()
            #expect(first.map { String(decoding: $0, as: UTF8.self) } == "data: {\"n\": 0}\n\n")
            let error = await #expect(throws: HTTPError.self) {
                _ = try await iterator.next()
            }
            #expect(error?.code == .timeout)
            #expect(error?.message.contains("the response body stalled") == true)
        }
    }

    @Test("A total timeout ends a stream that keeps sending")
    func totalTimeout() async throws {
        try await withTestServer { server, client in
            let timeouts = HTTPTimeouts(idle: .seconds(5), total: .milliseconds(600))
            let response = try await client.stream(
                HTTPRequest(url: server.baseURL + "/stream?frames=200&interval_ms=50", timeouts: timeouts))
            var frames = 0
            let error = await #expect(throws: HTTPError.self) {
                for try await _ in response.body {
                    frames += 1
                }
            }
            #expect(error?.code == .timeout)
            #expect(error?.message.contains("total timeout") == true)
            #expect(frames > 0)
        }
    }

    @Test("A host that drops connection attempts trips the connect timeout")
    func connectTimeout() async throws {
        try await withTestServer { server, client in
            let hole = try #require(server.announcement["blackhole_port"])
            let timeouts = HTTPTimeouts(connect: .milliseconds(300))
            var thrown: HTTPError?
            let time = await elapsed {
                thrown = await #expect(throws: HTTPError.self) {
                    try await client.execute(HTTPRequest(url: "http://127.0.0.1:\(hole)/", timeouts: timeouts))
                }
            }
            #expect(thrown?.code == .timeout)
            #expect(thrown?.message.contains("connect timeout") == true)
            #expect(thrown?.curlCode == 28)
            #expect(time < .seconds(5))
        }
    }

    @Test("A port nobody listens on is a connect error that names it")
    func connectionRefused() async throws {
        let server = try await PythonServer.start("http_test_server.py")
        let port = server.port
        await server.stopInBackground()
        await withHTTPClient { client in
            let error = await #expect(throws: HTTPError.self) {
                try await client.execute(HTTPRequest(url: "http://127.0.0.1:\(port)/echo"))
            }
            #expect(error?.code == .connect)
            #expect(error?.message.hasPrefix("GET http://127.0.0.1:\(port)/echo: could not connect") == true)
            #expect(error?.curlCode == 7)
        }
    }

    @Test("A connection dropped mid-body is reported as closed after the bytes that did arrive")
    func droppedConnection() async throws {
        try await withTestServer { server, client in
            for mode in ["length", "chunked"] {
                let response = try await client.stream(
                    HTTPRequest(url: server.baseURL + "/drop?mode=\(mode)&bytes=300"))
                var received = 0
                let error = await #expect(throws: HTTPError.self) {
                    for try await chunk in response.body {
                        received += chunk.count
                    }
                }
                #expect(error?.code == .closed, "mode \(mode)")
                #expect(received == 300, "mode \(mode)")
            }
            let nothing = await #expect(throws: HTTPError.self) {
                try await client.execute(HTTPRequest(url: server.baseURL + "/close"))
            }
            #expect(nothing?.code == .closed)
        }
    }

    @Test("A reply that is not HTTP is a protocol error")
    func garbageReply() async throws {
        try await withTestServer { server, client in
            let error = await #expect(throws: HTTPError.self) {
                try await client.execute(HTTPRequest(url: server.baseURL + "/garbage"))
            }
            #expect(error?.code == .protocolError)
        }
    }

    @Test("Malformed URLs, methods and headers are refused before any I/O")
    func invalidRequests() async throws {
        await withHTTPClient { client in
            let bad: [HTTPRequest] = [
                HTTPRequest(url: "ftp://127.0.0.1/file"),
                HTTPRequest(url: "http://"),
                HTTPRequest(url: "127.0.0.1:8080/path"),
                HTTPRequest(url: "http://127.0.0.1:99999/"),
                HTTPRequest(url: "http://127.0.0.1/a b"),
                HTTPRequest(method: "GET /x", url: "http://127.0.0.1/"),
                HTTPRequest(url: "http://127.0.0.1/", headers: ["X-Injected": "a\r\nHost: elsewhere"]),
                HTTPRequest(url: "http://127.0.0.1/", headers: ["Bad Name": "x"]),
            ]
            for request in bad {
                let error = await #expect(throws: HTTPError.self, "\(request)") {
                    try await client.execute(request)
                }
                #expect(error?.code == .invalidRequest, "\(request)")
                #expect(error?.curlCode == nil)
            }
        }
    }

    @Test("Error messages and request descriptions never show credentials, query values or secret headers")
    func secretsStayOut() async throws {
        let server = try await PythonServer.start("http_test_server.py")
        let port = server.port
        await server.stopInBackground()
        let request = HTTPRequest(
            url: "http://alice:pw-s3cret@127.0.0.1:\(port)/v1/x?api_key=KEY-s3cret&model=m1",
            headers: ["Authorization": "Bearer TOKEN-s3cret", "x-api-key": "XKEY-s3cret", "Accept": "text/plain"],
            body: Array("body-s3cret".utf8))
        await withHTTPClient { client in
            let error = await #expect(throws: HTTPError.self) {
                try await client.execute(request)
            }
            var dumped = ""
            dump(request, to: &dumped)
            let outputs = [
                error?.message ?? "", "\(error.map { $0 as Any } ?? "")", String(describing: request),
                String(reflecting: request), dumped, "\(request.headers)",
            ]
            for output in outputs {
                #expect(!output.contains("s3cret"), "\(output)")
                #expect(!output.contains("alice"), "\(output)")
            }
            #expect(error?.message.contains("http://REDACTED:REDACTED@127.0.0.1:\(port)/v1/x?api_key=REDACTED") == true)
            #expect(String(reflecting: request).contains("Accept: text/plain"))
        }
    }

    // MARK: Cancellation and shutdown

    @Test("Cancelling the reading task aborts the transfer and the server sees the client leave")
    func cancelMidStream() async throws {
        try await withTestServer { server, client in
            let (started, signal) = AsyncStream.makeStream(of: Void.self)
            let reader = Task {
                defer { signal.finish() }
                let response = try await client.stream(
                    HTTPRequest(url: server.baseURL + "/stream?frames=2000&interval_ms=20&id=cancelled"))
                for try await _ in response.body {
                    signal.yield()
                }
            }
            var waiter = started.makeAsyncIterator()
            _ = await waiter.next()
            reader.cancel()
            let result = await reader.result
            #expect(throws: HTTPError.self) { try result.get() }
            if case .failure(let error as HTTPError) = result {
                #expect(error.code == .cancelled)
            }
            let record = try await Self.waitForDisconnect(of: "cancelled", server: server, client: client)
            #expect(record["disconnected"] as? Bool == true)
            #expect((record["sent"] as? Int ?? 2000) < 2000)
        }
    }

    @Test("Cancelling a task that waits for the head returns at once")
    func cancelBeforeHead() async throws {
        try await withTestServer { server, client in
            let waiting = Task {
                try await client.execute(HTTPRequest(url: server.baseURL + "/stall?seconds=20"))
            }
            try await Task.sleep(for: .milliseconds(200))
            let time = await elapsed {
                waiting.cancel()
                let result = await waiting.result
                if case .failure(let error as HTTPError) = result {
                    #expect(error.code == .cancelled)
                    #expect(error.message.hasSuffix("/stall?seconds=REDACTED was cancelled"))
                } else {
                    Issue.record("expected a cancellation error, got \(result)")
                }
            }
            #expect(time < .seconds(2))
        }
    }

    @Test("Releasing a streamed response unread cancels its transfer")
    func droppedResponse() async throws {
        try await withTestServer { server, client in
            do {
                let response = try await client.stream(
                    HTTPRequest(url: server.baseURL + "/stream?frames=2000&interval_ms=20&id=dropped"))
                #expect(response.status == 200)
            }
            let record = try await Self.waitForDisconnect(of: "dropped", server: server, client: client)
            #expect(record["disconnected"] as? Bool == true)
        }
    }

    @Test("Shutting down fails running requests with shutdown, and later requests too")
    func shutdownFailsRequests() async throws {
        try await withPythonServer("http_test_server.py") { server in
            let client = HTTPClient()
            let running = Task {
                try await client.execute(HTTPRequest(url: server.baseURL + "/stall?seconds=20"))
            }
            try await Task.sleep(for: .milliseconds(300))
            await client.shutdown()
            let result = await running.result
            if case .failure(let error as HTTPError) = result {
                #expect(error.code == .shutdown)
            } else {
                Issue.record("expected a shutdown error, got \(result)")
            }
            let late = await #expect(throws: HTTPError.self) {
                try await client.execute(HTTPRequest(url: server.baseURL + "/echo"))
            }
            #expect(late?.code == .shutdown)
            await client.shutdown()
        }
    }

    // MARK: TLS

    @Test("An https server with a private certificate is refused by default and trusted with its CA bundle")
    func tlsWithPrivateCA() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hostscope-tls-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let cert = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        openssl.arguments = [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ]
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        try #require(openssl.terminationStatus == 0)

        try await withPythonServer("http_test_server.py", arguments: ["--tls-cert", cert, "--tls-key", key]) { server in
            #expect(server.baseURL.hasPrefix("https://127.0.0.1:"))
            await withHTTPClient { client in
                let error = await #expect(throws: HTTPError.self) {
                    try await client.execute(HTTPRequest(url: server.baseURL + "/echo"))
                }
                #expect(error?.code == .tls)
            }
            try await withHTTPClient(configuration: HTTPClient.Configuration(caBundlePath: cert)) { client in
                let response = try await client.execute(.postJSON(url: server.baseURL + "/echo", json: "{}"))
                #expect(response.status == 200)
                #expect(try jsonObject(response.body)["body"] as? String == "{}")
            }
        }
    }

    // MARK: Helpers

    static func waitForDisconnect(
        of stream: String, server: PythonServer, client: HTTPClient
    ) async throws -> [String: Any] {
        var record: [String: Any] = [:]
        for _ in 0..<100 {
            record = try jsonObject(
                try await client.execute(HTTPRequest(url: server.baseURL + "/streams/\(stream)")).body)
            if record["disconnected"] as? Bool == true {
                break
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return record
    }
}
