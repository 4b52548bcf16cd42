import Foundation
import OrderedJSON
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP connection to a loopback port from a chosen loopback source address, to see how `serve` treats
/// connections that never finish a request.
final class RawConnection {
    let descriptor: Int32

    init(port: Int, from source: String = "127.0.0.1") throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, source, &local.sin_addr)
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard descriptor >= 0, bound == 0, connected == 0 else {
            close(descriptor)
            throw HarnessError(description: "cannot connect from \(source) to port \(port): errno \(errno)")
        }
    }

    deinit { close(descriptor) }

    func send(_ text: String) {
        _ = Array(text.utf8).withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Whether the server has closed the connection (end of file or reset) within `timeout` seconds; bytes it
    /// sends meanwhile (a response) are read and dropped.
    func closedByPeer(within timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 4096)
        repeat {
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let wait = Int32(max(0, deadline.timeIntervalSinceNow) * 1000)
            guard poll(&entry, 1, wait) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count == 0 || count < 0 && errno != EINTR && errno != EAGAIN { return true }
        } while Date() < deadline
        return false
    }
}

/// A self-signed certificate for 127.0.0.1 (`CN=localhost`) and its key, mode 0600, made by openssl.
enum ServeTLSFiles {
    static func make(in directory: String, name: String) throws -> (certificate: String, key: String) {
        let certificate = directory + "/\(name).pem"
        let key = directory + "/\(name)-key.pem"
        let made = try CLI.runShell(
            "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=localhost "
                + "-addext subjectAltName=IP:127.0.0.1 -keyout \(key) -out \(certificate) 2>&1")
        guard made.status == 0 else { throw HarnessError(description: "openssl failed: \(made.stdout)") }
        chmod(key, 0o600)
        return (certificate, key)
    }
}

/// `serve`'s listener against a hostile client: the `Host` header, timeouts, connection caps, rate
/// budgets, what its JSON shows of command lines, and the files an operator gives it.
@Suite(.serialized) struct ServeListenerSecurityTests {
    let directory: String
    let token = "0123456789abcdef0123456789abcdef"

    init() throws {
        directory = NSTemporaryDirectory() + "hostscope-serve-listener-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    func tokenFile(_ text: String) throws -> String {
        let path = directory + "/token-\(UUID().uuidString)"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o600)
        return path
    }

    func makeCertificate(name: String = "cert") throws -> (certificate: String, key: String) {
        try ServeTLSFiles.make(in: directory, name: name)
    }

    /// The status and error code of GET `path` with `Host: host`.
    func answer(_ serve: RunningServe, _ path: String, host: String, headers: [String] = []) throws -> (Int, String?) {
        let response = try serve.get(path, headers: ["Host: \(host)"] + headers)
        let code = (try? JSONParser.parse(response.body))?["error"]?["code"]?.stringValue
        return (response.status, code)
    }

    // MARK: The Host header (DNS rebinding)

    @Test func aHostHeaderNamingAnotherSiteIsRefusedWith421BeforeRouting() throws {
        let serve = try RunningServe(
            [
                "local", "--every", "60s", "--no-history", "--listen", "127.0.0.1:0", "--allowed-hosts",
                "grafana.example", "--allowed-hosts", "proxy.example:8443",
            ], directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        let port = serve.port
        for path in ["/api/v1/hosts", "/metrics", "/", "/no/such/page", "/api/v1/events", "/readyz"] {
            let (status, code) = try answer(serve, path, host: "evil.example:\(port)")
            #expect(status == 421, "\(path)")
            #expect(code == "misdirected_request", "\(path)")
        }
        for host in [
            "evil.example", "localhost", "localhost:\(port + 1)", "127.lan.example:\(port)", "grafana.example.evil",
        ] {
            #expect(try answer(serve, "/api/v1/hosts", host: host).0 == 421, "\(host)")
        }
        for host in [
            "localhost:\(port)", "LOCALHOST.:\(port)", "127.0.0.1:\(port)", "127.9.8.7:\(port)", "[::1]:\(port)",
            "grafana.example", "grafana.example:443", "proxy.example:8443",
        ] {
            #expect(try answer(serve, "/api/v1/hosts", host: host).0 == 200, "\(host)")
        }
        #expect(try answer(serve, "/api/v1/hosts", host: "proxy.example:9999").0 == 421)
        // A load balancer's health check is answered whatever name it uses.
        #expect(try answer(serve, "/healthz", host: "lb-target.internal:80").0 == 200)

        let open = try RunningServe(
            ["local", "--every", "60s", "--no-history", "--listen", "127.0.0.1:0", "--allowed-hosts", "*"],
            directory: directory)
        defer { _ = open.stop() }
        try open.waitUntilListening()
        #expect(try answer(open, "/api/v1/hosts", host: "evil.example:\(open.port)").0 == 200)
        #expect(open.logLines().contains { $0["host_check"]?.stringValue == "off" })
    }

    /// Runs `script` in a network and mount namespace of its own (only its loopback interface, with
    /// 10.77.0.1 added to it, and its own /etc/hosts), printing `key=value` lines.
    func inNamespace(hosts: String, _ script: String) throws -> [String: String] {
        let hostsFile = directory + "/hosts-\(UUID().uuidString)"
        try hosts.write(toFile: hostsFile, atomically: true, encoding: .utf8)
        let scriptFile = directory + "/ns-\(UUID().uuidString).sh"
        try """
        set -u
        cd \(CLI.shellQuoted(directory))
        mount --bind \(hostsFile) /etc/hosts
        ip link set lo up
        ip addr add 10.77.0.1/32 dev lo
        BIN=\(CLI.shellQuoted(CLI.binary))
        wait_listening() { for _ in $(seq 100); do grep -q '"listening"' "$1" && return 0; sleep 0.2; done; return 1; }
        \(script)
        """.write(toFile: scriptFile, atomically: true, encoding: .utf8)
        let result = try CLI.runShell("unshare -mn sh \(scriptFile) 2>&1")
        var values: [String: String] = [:]
        for line in result.stdout.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            values[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        values["output"] = result.stdout
        return values
    }

    @Test func aListenNameIsJudgedByTheAddressItResolvesToAndBeyondLoopbackTheMachinesNamesAreAnswered() throws {
        let tokenPath = try tokenFile(token + "\n")
        let values = try inNamespace(
            hosts: "127.0.0.1 localhost\n0.0.0.0 127.lan.example.internal\n10.77.0.1 monitor.example\n",
            """
            timeout 20 "$BIN" serve local --no-history --listen 127.lan.example.internal:0 >/dev/null 2>err.log
            echo "tricky_status=$?"
            echo "tricky_error=$(tr '\\n' ' ' < err.log)"
            "$BIN" serve local --no-history --every 60s --listen monitor.example:19464 --token-file \(tokenPath) \
                2>serve.log &
            pid=$!
            wait_listening serve.log || cat serve.log
            echo "listening=$(grep -o '"address":"[^"]*"' serve.log)"
            for host in evil.example:19464 monitor.example:19464 10.77.0.1:19464 "$(hostname):19464" localhost:19464; do
                code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -H "Host: $host" \
                    -H 'Authorization: Bearer \(token)' http://10.77.0.1:19464/api/v1/hosts)
                echo "host:$host=$code"
            done
            echo "hostname=$(hostname)"
            kill $pid; wait $pid
            """)
        // The name reads like 127.0.0.0/8 but stands for every interface: a token is needed.
        #expect(values["tricky_status"] == "64", "\(values["output"] ?? "")")
        #expect(values["tricky_error"]?.contains("--token-file") == true, "\(values["output"] ?? "")")
        #expect(values["listening"]?.contains("10.77.0.1:19464") == true, "\(values["output"] ?? "")")
        let hostname = values["hostname"] ?? "?"
        #expect(values["host:evil.example:19464"] == "421", "\(values["output"] ?? "")")
        #expect(values["host:monitor.example:19464"] == "200", "\(values["output"] ?? "")")
        #expect(values["host:10.77.0.1:19464"] == "200", "\(values["output"] ?? "")")
        #expect(values["host:\(hostname):19464"] == "200", "\(values["output"] ?? "")")
        #expect(values["host:localhost:19464"] == "200", "\(values["output"] ?? "")")
    }

    // MARK: Timeouts and connection caps

    @Test func partialHeadersAndIdleConnectionsAreClosedAndOneAddressCannotTakeEveryConnection() throws {
        let serve = try RunningServe(
            [
                "local", "--every", "60s", "--no-history", "--listen", "127.0.0.1:0", "--header-timeout", "3s",
                "--idle-timeout", "5s", "--max-connections-per-address", "20",
            ], directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        let opened = Date()
        // Thirty connections from one address, each with a request head that never ends.
        let flood = try (0..<30).map { _ in try RawConnection(port: serve.port, from: "127.0.0.3") }
        for connection in flood { connection.send("GET /api/v1/hosts HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ") }
        // The ten over the per-address cap are closed at once (which ten depends on the order the server's
        // threads take them in), and the health check from another address is answered meanwhile.
        var refused = Set<Int>()
        while Date().timeIntervalSince(opened) < 2, refused.count < 10 {
            for (index, connection) in flood.enumerated() where !refused.contains(index) {
                if connection.closedByPeer(within: 0) { refused.insert(index) }
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        let health = try serve.get("/healthz")
        let stillOpen = flood.indices.filter { !refused.contains($0) && !flood[$0].closedByPeer(within: 0) }.count
        let elapsed = Date().timeIntervalSince(opened)
        #expect(refused.count == 10)
        #expect(health.status == 200)
        if elapsed < 2.5 { #expect(stillOpen == 20, "\(stillOpen) of the other 20 open after \(elapsed) s") }
        // The twenty it kept are closed once their first request's head is late.
        let kept = flood.indices.filter { !refused.contains($0) }
        let closedLate = kept.filter { flood[$0].closedByPeer(within: max(0.1, 12 - Date().timeIntervalSince(opened))) }
        #expect(closedLate.count == 20)

        // A keep-alive connection with nothing under way is closed after the idle timeout.
        let idle = try RawConnection(port: serve.port)
        idle.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:\(serve.port)\r\n\r\n")
        #expect(idle.closedByPeer(within: 10))
        // And once the flood is over the address may connect again.
        #expect(try RawConnection(port: serve.port, from: "127.0.0.3").closedByPeer(within: 0.5) == false)
    }

    @Test func aTLSConnectionThatNeverHandshakesIsClosed() throws {
        let (certificate, key) = try makeCertificate()
        let serve = try RunningServe(
            [
                "local", "--every", "60s", "--no-history", "--listen", "127.0.0.1:0", "--tls-cert", certificate,
                "--tls-key", key, "--header-timeout", "1s",
            ], directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        let silent = try RawConnection(port: serve.port)
        let started = Date()
        #expect(silent.closedByPeer(within: 10))
        #expect(Date().timeIntervalSince(started) > 0.5)
        // A client that does handshake is served.
        let health = try CurlCommand.get(
            "https://127.0.0.1:\(serve.port)/healthz", extra: ["--cacert", certificate])
        #expect(health.status == 200)
        // Once its first request has come, a connection is no longer held to the header timeout: an event
        // stream over TLS outlives it.
        let streamStarted = Date()
        let stream = try CurlCommand.get(
            "https://127.0.0.1:\(serve.port)/api/v1/events", timeout: 3.5, extra: ["-N", "--cacert", certificate])
        #expect(stream.body.contains("retry: 2000"))
        #expect(
            Date().timeIntervalSince(streamStarted) > 3,
            "the stream ended after \(Date().timeIntervalSince(streamStarted)) s")
    }

    @Test func theDescriptorSoftLimitIsRaisedToTheHardLimitAtStart() throws {
        let log = directory + "/nofile.log"
        let result = try CLI.runShell(
            """
            prlimit --nofile=1024:8192 \(CLI.shellQuoted(CLI.binary)) serve local --no-history --every 60s \
                --listen 127.0.0.1:0 2>\(log) &
            pid=$!
            for _ in $(seq 100); do grep -q '"listening"' \(log) && break; sleep 0.2; done
            grep 'Max open files' /proc/$pid/limits
            kill $pid; wait $pid
            """)
        let fields = result.stdout.split(separator: " ", omittingEmptySubsequences: true)
        #expect(fields.contains("8192"), "\(result.stdout)")
        #expect(!fields.contains("1024"), "\(result.stdout)")
        let listening = try String(contentsOfFile: log, encoding: .utf8)
        #expect(listening.contains("\"descriptors\":8192"), "\(listening)")
    }

    // MARK: Rate budgets

    @Test func anonymousRequestsCannotSpendTheTokensBudgetAndHealthzIsNeverLimited() throws {
        let serve = try RunningServe(
            [
                "local", "--every", "60s", "--no-history", "--listen", "127.0.0.1:0", "--token-file",
                try tokenFile(token + "\n"), "--rate-limit", "1",
            ], directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        func statuses(_ path: String, count: Int, headers: [String] = []) throws -> [Int] {
            let urls = Array(repeating: CLI.shellQuoted(serve.url(path)), count: count).joined(separator: " ")
            let options = headers.map { "-H " + CLI.shellQuoted($0) }.joined(separator: " ")
            let result = try CLI.runShell("curl -s \(options) -o /dev/null -w '%{http_code}\\n' \(urls)")
            return result.stdout.split(separator: "\n").compactMap { Int($0) }
        }
        // An anonymous flood from Prometheus's address: refused, then rate limited.
        let anonymous = try statuses("/metrics", count: 25)
        #expect(anonymous.prefix(10).allSatisfy { $0 == 401 }, "\(anonymous)")
        #expect(anonymous.contains(429), "\(anonymous)")
        // Prometheus, with the token, is still served.
        let scrape = try serve.get("/metrics", headers: ["Authorization: Bearer \(token)"])
        #expect(scrape.status == 200)
        // Health checks are never refused for the rate.
        let health = try statuses("/healthz", count: 40)
        #expect(health.count == 40 && health.allSatisfy { $0 == 200 }, "\(health)")
        // The token's budget is limited too.
        let authenticated = try statuses("/metrics", count: 25, headers: ["Authorization: Bearer \(token)"])
        #expect(authenticated.contains(429), "\(authenticated)")
    }

    // MARK: Command lines

    @Test func commandLinesAreCutToTheExecutableInEveryJSONOutput() async throws {
        let secret = "hunter2-\(UUID().uuidString.prefix(8))"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        // `; :` keeps bash from replacing itself with sleep: its own command line holds the secret.
        process.arguments = ["-c", "sleep 600; :", "fakedb", "--db-password=\(secret)"]
        try process.run()
        defer { process.terminate() }
        let pid = process.processIdentifier
        let serve = try RunningServe(
            ["local", "--every", "1s", "--top", "5000", "--listen", "127.0.0.1:0"], directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        let events = Task.detached { [url = serve.url("/api/v1/events?types=record")] in
            try CurlCommand.get(url, timeout: 6, extra: ["-N"])
        }
        let marker = "\"pid\":\(pid),"
        let host = try serve.waitFor("/api/v1/hosts/local") { $0.body.contains(marker) }
        let hosts = try serve.get("/api/v1/hosts")
        let history = try serve.waitFor("/api/v1/hosts/local/history?since=10m&limit=5") { $0.body.contains(marker) }
        let stream = try await events.value
        for (name, body) in [
            ("/api/v1/hosts/local", host.body), ("/api/v1/hosts", hosts.body), ("history", history.body),
            ("events", stream.body),
        ] {
            #expect(body.contains(marker), "\(name) does not list the process")
            #expect(!body.contains(secret), "\(name) shows the command line")
            #expect(!body.contains("--db-password"), "\(name) shows the command line")
            #expect(body.contains("\"command\":\"bash\""), "\(name)")
        }
    }

    // MARK: Operator inputs

    @Test func theTokenIsTheFirstLineAndThirtyTwoCharactersOrMore() throws {
        let emptyFirst = try CLI.run(
            [
                "serve", "local", "--no-history", "--listen", "127.0.0.1:0", "--token-file",
                try tokenFile("\n\(token)\n"),
            ],
            timeout: 30)
        #expect(emptyFirst.status == 64)
        #expect(emptyFirst.stderr.contains("first line"), "\(emptyFirst.stderr)")
        let short = try CLI.run(
            [
                "serve", "local", "--no-history", "--listen", "127.0.0.1:0", "--token-file",
                try tokenFile("0123456789abcdef0123\n"),
            ], timeout: 30)
        #expect(short.status == 64)
        #expect(short.stderr.contains("32 characters"), "\(short.stderr)")
    }

    @Test func anOversizedOrOneLineHostsFileIsRefusedWithoutBeingEchoed() throws {
        // Over 1 MiB of valid lines; then one line under 1 MiB of many names.
        for (text, phrase) in [
            (String(repeating: "local\n", count: 200_000), "1 MiB"),
            (String(repeating: "web1 ", count: 150_000), "more than one host"),
        ] {
            let path = directory + "/hosts-\(UUID().uuidString)"
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let run = try CLI.run(
                ["serve", "--hosts-file", path, "--no-history", "--listen", "127.0.0.1:0"], timeout: 30)
            #expect(run.status == 64)
            #expect(run.stderr.contains(phrase), "\(run.stderr.prefix(500))")
            #expect(run.stderr.utf8.count < 400, "\(run.stderr.utf8.count) bytes of error")
        }
    }

    @Test func aReloadOfAnOversizedHostsFileKeepsTheFleetAndSaysWhyAndLaterReloadsWork() throws {
        let hostsFile = directory + "/hosts"
        try "local\n".write(toFile: hostsFile, atomically: true, encoding: .utf8)
        let serve = try RunningServe(
            ["--hosts-file", hostsFile, "--every", "60s", "--no-history", "--listen", "127.0.0.1:0"],
            directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        try String(repeating: "local\n", count: 400_000).write(toFile: hostsFile, atomically: true, encoding: .utf8)
        serve.process.signal(SIGHUP)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, !serve.log.contains("reload failed") { Thread.sleep(forTimeInterval: 0.1) }
        let failure = try #require(
            serve.logLines().first { $0["message"]?.stringValue?.hasPrefix("reload failed") == true })
        #expect(failure["reason"]?.stringValue?.contains("1 MiB") == true, "\(failure)")
        let unreachable = "nobody@127.0.0.1:1"
        try "local\n\(unreachable)\n".write(toFile: hostsFile, atomically: true, encoding: .utf8)
        serve.process.signal(SIGHUP)
        _ = try serve.waitFor("/api/v1/hosts", timeout: 10) { $0.body.contains(unreachable) }
        #expect(serve.stop() == 0)
    }

    @Test func tlsFilesThatAreFIFOsOrDoNotMatchAreRefusedNamingTheFiles() throws {
        let (certificate, key) = try makeCertificate()
        let (_, otherKey) = try makeCertificate(name: "other")
        let fifo = directory + "/fifo.pem"
        try #require(mkfifo(fifo, 0o600) == 0)
        for (cert, tlsKey, what) in [(certificate, fifo, "key"), (fifo, key, "certificate")] {
            let run = try CLI.run(
                ["serve", "local", "--no-history", "--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", tlsKey],
                timeout: 20)
            #expect(run.status == 1, "\(what): \(run.stderr)")
            #expect(run.stderr.contains("not a regular file") && run.stderr.contains(fifo), "\(what): \(run.stderr)")
        }
        let mismatch = try CLI.run(
            [
                "serve", "local", "--no-history", "--listen", "127.0.0.1:0", "--tls-cert", certificate, "--tls-key",
                otherKey,
            ], timeout: 20)
        #expect(mismatch.status == 1)
        #expect(mismatch.stderr.contains(certificate) && mismatch.stderr.contains(otherKey), "\(mismatch.stderr)")
        #expect(mismatch.stderr.contains("is not the key of the certificate"), "\(mismatch.stderr)")
    }
}
