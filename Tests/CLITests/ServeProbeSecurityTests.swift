import Foundation
import OrderedJSON
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What a client of `serve` can make it do: numbers from outside never trap, `/probe` never lets the
/// requester choose the address or receive credentials, the hosts it adds are capped and expire, and the
/// smaller promises of the HTTP face (readiness without names, HEAD, span kinds, unknown history, event-stream
/// slots per address). Each against a real `serve` process.
@Suite(.serialized) struct ServeProbeSecurityTests {
    let directory: String

    init() throws {
        directory = NSTemporaryDirectory() + "hostscope-probe-security-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// A `serve` of the pattern `h*`, every second, through ``closedPortConfig()``, listening already.
    func closedPortServe(_ extra: [String]) throws -> RunningServe {
        let serve = try RunningServe(
            ["h*", "-F", try closedPortConfig(), "--every", "1s", "--listen", "127.0.0.1:0", "--connect-timeout", "1s"]
                + extra, directory: directory)
        try serve.waitUntilListening()
        return serve
    }

    /// An ssh_config whose `Host hz h*` block sends every `h…` name to a loopback port nothing listens on: a
    /// fixed address, so the pattern admits any plain `h…` name, and each collection fails at once (`hz` is
    /// there because a pattern of the fleet must select a host of ssh_config).
    func closedPortConfig() throws -> String {
        let closed = try LoopbackListener.freePort()
        let path = directory + "/ssh_config"
        try """
        Host hz h*
            HostName 127.0.0.1
            Port \(closed)
            User nobody
            IdentityFile \(directory)/no-such-key
            IdentitiesOnly yes
            UserKnownHostsFile \(directory)/known_hosts

        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func tokenFile() throws -> (path: String, token: String) {
        let path = directory + "/token"
        let token = "0123456789abcdef0123456789abcdef"
        try token.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o600)
        return (path, token)
    }

    @Test func scrapeTimeoutsAndRateLimitsOfAnySizeNeverEndTheProcess() throws {
        // `--rate-limit 1e300` trapped at start when its burst was converted.
        let serve = try closedPortServe(["--rate-limit", "1e300"])
        defer { _ = serve.stop() }
        // Each value on a host without a record yet, so that every one reaches the first-record wait.
        let values = ["1e300", "inf", "-inf", "9.3e15", "nan", "-1", "-1e300", "0x1p1023", "1e-300", "garbage", "0.6"]
        for (index, value) in values.enumerated() {
            let response = try serve.get(
                "/probe?target=h\(index)", headers: ["X-Prometheus-Scrape-Timeout-Seconds: \(value)"])
            #expect(response.status == 200, "\(value): \(response.status) \(response.body.prefix(200))")
            #expect(!serve.process.hasExited, "serve ended on X-Prometheus-Scrape-Timeout-Seconds: \(value)")
        }
        #expect(try serve.get("/healthz").status == 200)
        #expect(serve.stop() == 0)
    }

    @Test func probesAreCappedExpireWhenNoLongerAskedForAndRefusalsAreCounted() throws {
        let serve = try closedPortServe(["--probe-max-hosts", "2"])
        defer { _ = serve.stop() }
        #expect(try serve.get("/probe?target=h1").status == 200)
        #expect(try serve.get("/probe?target=h2").status == 200)
        let refused = try serve.get("/probe?target=h3")
        #expect(refused.status == 503, "\(refused.body)")
        #expect(try JSONParser.parse(refused.body)["error"]?["code"]?.stringValue == "probe_limit_reached")
        #expect(refused.body.contains("--probe-max-hosts"))
        #expect(try serve.get("/probe?target=evil.example").status == 403)
        let metrics = try serve.waitFor("/metrics") { $0.body.contains("hostscope_probe_refusals_total") }
        #expect(metrics.body.contains("hostscope_probe_refusals_total{reason=\"limit\"} 1\n"), "\(metrics.body)")
        #expect(metrics.body.contains("hostscope_probe_refusals_total{reason=\"not_in_fleet\"} 1\n"))

        // h1 probed again 1.5 s later, then no more: it is dropped after three of its intervals (about
        // 4.5 s), while h2 (probed once) stays; its place then takes h3.
        Thread.sleep(forTimeInterval: 1.5)
        #expect(try serve.get("/probe?target=h1").status == 200)
        _ = try serve.waitFor("/api/v1/hosts", timeout: 20) { response in
            !response.body.contains("\"h1\"") && response.body.contains("\"h2\"")
        }
        #expect(try serve.get("/probe?target=h3").status == 200)
        #expect(serve.log.contains("stopped watching hosts no longer probed"))
    }

    @Test func readinessNamesHostsOnlyToTheTokenHolder() throws {
        let closed = try LoopbackListener.freePort()
        let (tokenPath, token) = try tokenFile()
        // A tick once an hour: the host waits for its first record for the whole test.
        let host = "nobody@127.0.0.1:\(closed)"
        let serve = try RunningServe(
            [host, "--every", "1h", "--listen", "127.0.0.1:0", "--token-file", tokenPath], directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        let anonymous = try serve.get("/readyz")
        #expect(anonymous.status == 503)
        #expect(!anonymous.body.contains("127.0.0.1"), "\(anonymous.body)")
        let counted = try JSONParser.parse(anonymous.body)
        #expect(counted["waiting_for_first_record"]?.doubleValue == 1)
        #expect(counted["hosts"]?.doubleValue == 1)
        let wrong = try serve.get("/readyz", headers: ["Authorization: Bearer not-the-token-not-the-token"])
        #expect(!wrong.body.contains("127.0.0.1"))
        let named = try serve.get("/readyz", headers: ["Authorization: Bearer \(token)"])
        #expect(named.status == 503)
        #expect(try JSONParser.parse(named.body)["waiting_for_first_record"]?[0]?.stringValue == host)
    }

    /// A process of the host named with terminal escapes (`exec -a`, as anyone who can start a process
    /// there may do) reaches `/metrics` through `hostscope_top_process_info`'s `command` label: a `curl
    /// …/metrics` on a terminal would set the clipboard (OSC 52) and the title. Its controls arrive as
    /// U+FFFD, and no line of the scrape carries a control character.
    @Test func aProcessNamedWithTerminalEscapesReachesMetricsWithoutThem() throws {
        let server = try SSHTestServer.shared()
        let hostile = "\u{1B}]52;c;b3duZWQ=\u{07}\u{1B}]0;owned\u{07}x\u{9B}"
        // A busy process (the top ones are ranked by CPU), niced so it slows nothing else down.
        let busy = Process()
        busy.executableURL = URL(fileURLWithPath: "/bin/bash")
        busy.arguments = ["-c", "renice -n 19 $$ >/dev/null; exec -a \"$HOSTILE_NAME\" yes >/dev/null"]
        busy.environment = ["HOSTILE_NAME": hostile, "PATH": "/usr/bin:/bin"]
        try busy.run()
        // SIGKILL: the child may inherit a mask that blocks SIGTERM from the test's thread.
        defer {
            kill(busy.processIdentifier, SIGKILL)
            busy.waitUntilExit()
        }
        let serve = try RunningServe(
            [server.target, "--every", "1s", "--listen", "127.0.0.1:0", "--top", "10"] + CLI.harnessArguments(server),
            directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        let scrape = try serve.waitFor("/metrics") { response in
            response.body.split(separator: "\n").contains {
                $0.hasPrefix("hostscope_top_process_info") && $0.contains("pid=\"\(busy.processIdentifier)\"")
            }
        }
        let line = try #require(
            scrape.body.split(separator: "\n").first {
                $0.hasPrefix("hostscope_top_process_info") && $0.contains("pid=\"\(busy.processIdentifier)\"")
            })
        #expect(line.contains("command=\"\u{FFFD}]52;c;b3duZWQ=\u{FFFD}\u{FFFD}]0;owned\u{FFFD}x\u{FFFD}\""), "\(line)")
        let controls = scrape.body.unicodeScalars.filter {
            ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value)
        }
        #expect(controls.isEmpty, "control characters in the scrape: \(controls.map { $0.value })")
    }

    @Test func headSpanKindsAndHistoryOfUnknownHostsAnswerAsDocumented() throws {
        let closed = try LoopbackListener.freePort()
        let host = "nobody@127.0.0.1:\(closed)"
        let serve = try RunningServe([host, "--every", "1h", "--listen", "127.0.0.1:0"], directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        for path in ["/metrics", "/api/v1/hosts", "/healthz"] {
            let head = try CurlCommand.get(serve.url(path), extra: ["-I"])
            #expect(head.status == 405, "HEAD \(path): \(head.status)")
            #expect(head.headers["allow"] == "GET", "HEAD \(path)")
        }
        let kind = try serve.get("/api/v1/spans?kind=bogus")
        #expect(kind.status == 400)
        #expect(kind.body.contains("snapshot"))
        #expect(try serve.get("/api/v1/spans?kind=snapshot").status == 200)
        let unknown = try serve.get("/api/v1/hosts/never-watched/history")
        #expect(unknown.status == 404, "\(unknown.body)")
        #expect(try JSONParser.parse(unknown.body)["error"]?["code"]?.stringValue == "not_found")
        // A watched host without records yet has a history, empty.
        let encoded = host.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["@", ":"]))!
        let watched = try serve.get("/api/v1/hosts/\(encoded)/history")
        #expect(watched.status == 200, "\(watched.body)")
    }

    @Test func eventStreamSlotsAreCappedPerClientAddress() async throws {
        let serve = try RunningServe(["local", "--every", "1h", "--listen", "127.0.0.1:0"], directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        // Eight streams from 127.0.0.1, held open by clients that read them to a file.
        var streams: [Process] = []
        defer {
            for stream in streams where stream.isRunning { stream.terminate() }
        }
        for index in 0..<8 {
            let output = directory + "/stream-\(index)"
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
            process.arguments = ["-s", "-N", "--max-time", "60", "-o", output, serve.url("/api/v1/events")]
            try process.run()
            streams.append(process)
            try await waitUntil(timeout: .seconds(10), "stream \(index) to open") {
                ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").contains("retry:")
            }
        }
        let refused = try serve.get("/api/v1/events", headers: [], extraTimeout: 3)
        #expect(refused.status == 503, "\(refused.body)")
        #expect(refused.body.contains("from 127.0.0.1"), "\(refused.body)")
        // Another address still gets a stream.
        let other = try CurlCommand.get(
            serve.url("/api/v1/events"), timeout: 2, extra: ["--interface", "127.0.0.2"])
        #expect(other.status == 200)
    }

    @Test func aHostAdmittedByAPatternNeverRecordsAHostKeyNorReceivesThePassword() throws {
        let server = try SSHTestServer.shared()
        let password = try #require(server.password, "the harness sshd takes passwords only when run as root")
        let emptyKnownHosts = directory + "/probe_known_hosts"
        let known = directory + "/known_hosts_copy"
        try FileManager.default.copyItem(atPath: server.knownHostsPath, toPath: known)
        let common = [
            "HostName \(server.host)", "Port \(server.port)", "User \(server.user)",
            "IdentityFile \(directory)/no-such-key", "IdentitiesOnly yes", "IdentityAgent none",
        ]
        let config = directory + "/ssh_config_probe"
        try
            ("Host web-known-0 web-known-*\n"
            + (common + ["UserKnownHostsFile \(known)"]).map { "    \($0)\n" }.joined()
            + "Host web-*\n" + (common + ["UserKnownHostsFile \(emptyKnownHosts)"]).map { "    \($0)\n" }.joined()
            // No HostName: the name would be the address.
            + "Host free-0 free-*\n    User nobody\n")
            .write(toFile: config, atomically: true, encoding: .utf8)
        let before = Self.passwordLines(server)
        let serve = try RunningServe(
            [
                // On demand: web-known-0 and free-0, which the ssh_config names, are not contacted.
                "web-*", "free-*,!free-evil", "-F", config, "--on-demand", "--every", "1s", "--listen", "127.0.0.1:0",
                "--accept-new-host-key",
                "--password-env", "HOSTSCOPE_PROBE_PASSWORD",
            ], directory: directory, environment: ["HOSTSCOPE_PROBE_PASSWORD": password])
        defer { _ = serve.stop() }
        try serve.waitUntilListening()

        // Names that would choose the address are refused before anything is resolved.
        for name in ["free-x.evil.example", "free-127.0.0.1", "web-", "web-..", "free-evil."] {
            let refused = try serve.get("/probe?target=\(name)")
            #expect(refused.status == 403, "\(name): \(refused.status) \(refused.body)")
        }
        // An unknown host key is refused, never recorded, despite --accept-new-host-key.
        let unknownKey = try Self.firstError(probing: "web-evil", serve)
        #expect(unknownKey.hasPrefix("host_key"), "\(unknownKey)")
        let recorded = (try? String(contentsOfFile: emptyKnownHosts, encoding: .utf8)) ?? ""
        #expect(recorded.isEmpty, "a host key was recorded: \(recorded)")

        // With the key known, authentication is by key only: the password is never sent.
        let keyOnly = try Self.firstError(probing: "web-known-1", serve)
        #expect(keyOnly.hasPrefix("auth"), "\(keyOnly)")
        #expect(Self.passwordLines(server) == before, "sshd saw a password")
        #expect(!serve.log.contains(password))
    }
    /// The same with no `HostName`, so that the name is the address: resolved through an `/etc/hosts` of the test's
    /// own mount namespace (`unshare -m`, nothing leaves the machine), where `web-evil` and `web-known` are the
    /// harness sshd's address, as a hostile DNS answer would make them.
    @Test func aResolvedNameAPatternAdmitsNeverGetsItsKeyRecordedNorThePassword() throws {
        let server = try SSHTestServer.shared()
        let password = try #require(server.password, "the harness sshd takes passwords only when run as root")
        let hosts = directory + "/hosts"
        try "127.0.0.1 localhost\n\(server.host) web-evil web-known\n".write(
            toFile: hosts, atomically: true, encoding: .utf8)
        // known_hosts vouching for web-known alone: the harness's key under that name.
        let harness = try String(contentsOfFile: server.knownHostsPath, encoding: .utf8)
        let line = try #require(
            harness.split(separator: "\n").first { $0.hasPrefix("[\(server.host)]:\(server.port) ") })
        let knownHosts = directory + "/resolved_known_hosts"
        try (line.replacingOccurrences(of: "[\(server.host)]", with: "[web-known]") + "\n").write(
            toFile: knownHosts, atomically: true, encoding: .utf8)
        let before = try String(contentsOfFile: knownHosts, encoding: .utf8)
        let config = directory + "/ssh_config_resolved"
        try """
        Host web-0 web-*
            Port \(server.port)
            User \(server.user)
            IdentityFile \(directory)/no-such-key
            IdentitiesOnly yes
            IdentityAgent none
            UserKnownHostsFile \(knownHosts)

        """.write(toFile: config, atomically: true, encoding: .utf8)
        let sent = Self.passwordLines(server)
        let serve = try RunningServe(
            [
                "web-*", "-F", config, "--on-demand", "--every", "1s", "--listen", "127.0.0.1:0",
                "--accept-new-host-key", "--password-env", "HOSTSCOPE_PROBE_PASSWORD",
            ], directory: directory, environment: ["HOSTSCOPE_PROBE_PASSWORD": password],
            launcher: [
                "/usr/bin/unshare", "-m", "--propagation", "private", "/bin/sh", "-c",
                "mount --bind \"$0\" /etc/hosts && exec \"$@\"", hosts,
            ])
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        #expect(try serve.get("/probe?target=web-evil.example").status == 403)

        let unknownKey = try Self.firstError(probing: "web-evil", serve)
        #expect(unknownKey.hasPrefix("host_key"), "\(unknownKey)")
        #expect(try String(contentsOfFile: knownHosts, encoding: .utf8) == before, "a host key was recorded")

        let keyOnly = try Self.firstError(probing: "web-known", serve)
        #expect(keyOnly.hasPrefix("auth"), "\(keyOnly)")
        #expect(Self.passwordLines(server) == sent, "sshd saw a password")
    }

    /// Lines of the harness sshd's log about a password (`Failed password for …`, `Accepted password for …`).
    static func passwordLines(_ server: SSHTestServer) -> Int {
        ((try? String(contentsOfFile: server.logPath, encoding: .utf8)) ?? "").components(separatedBy: "\n")
            .filter { $0.contains("password for") }.count
    }

    /// Probes `host` and waits for the `last_error` (`kind: message`) of its first collection.
    static func firstError(probing host: String, _ serve: RunningServe) throws -> String {
        _ = try serve.get("/probe?target=\(host)")
        let state = try serve.waitFor("/api/v1/hosts/\(host)") { response in
            (try? JSONParser.parse(response.body))?["last_error"]?.stringValue != nil
        }
        return try JSONParser.parse(state.body)["last_error"]?.stringValue ?? ""
    }
}

extension RunningServe {
    /// GETs `path`, giving up after `extraTimeout` seconds (for a stream that would not end).
    func get(_ path: String, headers: [String], extraTimeout: Double) throws -> CurlCommand.Response {
        try CurlCommand.get(url(path), headers: headers, timeout: extraTimeout)
    }
}
