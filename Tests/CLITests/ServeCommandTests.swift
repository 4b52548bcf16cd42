import Foundation
import OrderedJSON
import Storage
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A `hostscope serve` process: started with its log (JSON lines on stderr) in a file, its port read
/// from the `listening` line.
final class RunningServe {
    let process: RunningCLI
    let logPath: String
    private(set) var port = 0

    init(
        _ arguments: [String], directory: String, environment: [String: String] = [:], launcher: [String] = []
    ) throws {
        logPath = directory + "/serve-\(UUID().uuidString).log"
        var argv = ["serve", "--log-level", "debug"] + arguments
        if !arguments.contains("--db") && !arguments.contains("--no-history") {
            argv += ["--db", directory + "/serve-\(UUID().uuidString).sqlite"]
        }
        process = try RunningCLI(argv, stderr: logPath, environment: environment, launcher: launcher)
    }

    /// Waits for the `listening` log line and reads the port from it; throws when the process ends first.
    func waitUntilListening(timeout: Double = 30) throws {
        do {
            try waitUntilBlocking(timeout: .seconds(timeout)) {
                for line in logLines() where line["message"]?.stringValue == "listening" {
                    if let address = line["address"]?.stringValue,
                        let port = Int(address.split(separator: ":").last ?? "")
                    {
                        self.port = port
                        return true
                    }
                }
                if process.hasExited { throw HarnessError(description: "serve ended early: \(log)") }
                return false
            }
        } catch is WaitTimeout {
            throw HarnessError(description: "serve did not listen within \(timeout) s: \(log)")
        }
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// The log, one parsed JSON object per line (lines that are not JSON are left out).
    func logLines() -> [JSONValue] {
        log.split(separator: "\n").compactMap { try? JSONParser.parse(String($0)) }
    }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    func get(_ path: String, headers: [String] = []) throws -> CurlCommand.Response {
        try CurlCommand.get(url(path), headers: headers)
    }

    /// Polls `path` until `accept` holds for its response.
    func waitFor(_ path: String, headers: [String] = [], timeout: Double = 30, _ accept: (CurlCommand.Response) -> Bool)
        throws -> CurlCommand.Response
    {
        var last: CurlCommand.Response?
        do {
            try waitUntilBlocking(timeout: .seconds(timeout), every: .milliseconds(200)) {
                last = try get(path, headers: headers)
                return last.map(accept) ?? false
            }
        } catch is WaitTimeout {
            throw HarnessError(
                description:
                    "\(path) never gave the expected answer; last: \(String(describing: last?.status)) \(last?.body.prefix(500) ?? "")"
            )
        }
        return last!
    }

    /// SIGTERM, then the exit status.
    func stop() -> Int32 {
        process.signal(SIGTERM)
        return process.wait()
    }
}

@Suite(.serialized) struct ServeCommandTests {
    let directory: String

    init() throws {
        directory = NSTemporaryDirectory() + "hostscope-serve-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// An ssh_config naming `count` aliases of the harness sshd (`h1`…), so one sshd stands for a fleet.
    func fleetConfig(_ server: SSHTestServer, count: Int) throws -> String {
        let path = directory + "/ssh_config"
        var text = ""
        for index in 1...count {
            text += """
                Host h\(index)
                    HostName \(server.host)
                    Port \(server.port)
                    User \(server.user)
                    IdentityFile \(server.keyPath)
                    UserKnownHostsFile \(server.knownHostsPath)

                """
        }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func memTotalBytes() throws -> Double {
        let text = try String(contentsOfFile: "/proc/meminfo", encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("MemTotal:") })
        let kib = try #require(Double(line.split(separator: " ")[1]))
        return kib * 1024
    }

    static func value(_ result: [[String: Any]]) -> Double? {
        ((result.first?["value"] as? [Any])?.last as? String).flatMap(Double.init)
    }

    @Test func prometheusScrapesServeAndPromQLSeesTheHostsFigures() async throws {
        let server = try SSHTestServer.shared()
        let serve = try RunningServe(
            [server.target, "--every", "1s", "--listen", "127.0.0.1:0"] + CLI.harnessArguments(server),
            directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        let prometheus = try PrometheusServer.start(
            configuration: """
                global:
                  scrape_interval: 1s
                  scrape_timeout: 1s
                scrape_configs:
                  - job_name: hostscope
                    honor_labels: true
                    static_configs:
                      - targets: ['127.0.0.1:\(serve.port)']
                """)
        defer { prometheus.stop() }

        let instance = server.target
        var memTotal: Double?
        var cpuRate: Double?
        var samplesInWindow: Double = 0
        // Samples carry the scrape's time while their values are of the collection before it: over a few
        // scrapes the two spans differ by up to an interval (a rate of 0 or half the real one on a loaded
        // machine), so the rate is read once the window holds a dozen scrapes.
        try? await waitUntil(timeout: .seconds(60), every: .milliseconds(500), "a dozen scrapes") {
            memTotal = Self.value(try prometheus.query("node_memory_MemTotal_bytes{instance=\"\(instance)\"}"))
            let userSeconds = "node_cpu_seconds_total{instance=\"\(instance)\",cpu=\"0\",mode=\"user\"}"
            samplesInWindow = Self.value(try prometheus.query("count_over_time(\(userSeconds)[20s])")) ?? 0
            cpuRate = Self.value(
                try prometheus.query("sum(rate(node_cpu_seconds_total{instance=\"\(instance)\"}[20s]))"))
            return memTotal != nil && cpuRate != nil && samplesInWindow >= 12
        }
        #expect(memTotal == (try Self.memTotalBytes()))
        // Every CPU spends one second per second in some mode: the sum of rates is the number of CPUs.
        let cpus = Double(ProcessInfo.processInfo.activeProcessorCount)
        let rate = try #require(cpuRate, "no rate of node_cpu_seconds_total: \(serve.log.suffix(2000))")
        #expect(rate > cpus * 0.5 && rate < cpus * 1.5, "sum of CPU second rates \(rate) for \(cpus) CPUs")
        #expect(Self.value(try prometheus.query("hostscope_up{instance=\"\(instance)\"}")) == 1)
        #expect(Self.value(try prometheus.query("up{job=\"hostscope\"}")) == 1)
    }

    @Test func theLiveExpositionPassesPromtoolAndTheOpenMetricsParser() throws {
        let server = try SSHTestServer.shared()
        let serve = try RunningServe(
            [server.target, "local", "--every", "1s", "--listen", "127.0.0.1:0"] + CLI.harnessArguments(server),
            directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        let text = try serve.waitFor("/metrics") { $0.body.contains("node_memory_MemTotal_bytes{instance=\"local\"}") }
        #expect(text.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
        let promtool = try ExpositionValidation.promtool(Array(text.body.utf8))
        #expect(promtool.passesPromtool, "\(promtool.status): \(promtool.output)")
        let openMetrics = try serve.get(
            "/metrics",
            headers: ["Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"])
        #expect(openMetrics.headers["content-type"] == "application/openmetrics-text; version=1.0.0; charset=utf-8")
        let parsed = try ExpositionValidation.openMetrics(Array(openMetrics.body.utf8))
        #expect(parsed.status == 0, "\(parsed.output)")
        // Asked for gzip (as Prometheus always asks), the body is compressed and reads back the same.
        let compressed = try CurlCommand.get(serve.url("/metrics"), extra: ["--compressed"])
        #expect(compressed.headers["content-encoding"] == "gzip")
        #expect(compressed.headers["vary"] == "Accept-Encoding")
        #expect(compressed.body.contains("node_memory_MemTotal_bytes{instance=\"local\"}"))
        #expect(try ExpositionValidation.promtool(Array(compressed.body.utf8)).passesPromtool)
    }

    @Test func twoShardedServesBehindOnePrometheusScrapeEveryHostOnce() async throws {
        let server = try SSHTestServer.shared()
        let config = try fleetConfig(server, count: 6)
        let shards = try (0..<2).map { _ in
            try RunningServe(
                ["h*", "-F", config, "--on-demand", "--every", "1s", "--listen", "127.0.0.1:0"], directory: directory)
        }
        defer { for shard in shards { _ = shard.stop() } }
        for shard in shards { try shard.waitUntilListening() }
        let hosts = (1...6).map { "'h\($0)'" }.joined(separator: ", ")
        let jobs = (0..<2).map { shard in
            """
              - job_name: hostscope-\(shard)
                metrics_path: /probe
                static_configs:
                  - targets: [\(hosts)]
                relabel_configs:
                  - source_labels: [__address__]
                    modulus: 2
                    target_label: __tmp_shard
                    action: hashmod
                  - source_labels: [__tmp_shard]
                    regex: '\(shard)'
                    action: keep
                  - source_labels: [__address__]
                    target_label: __param_target
                  - source_labels: [__param_target]
                    target_label: instance
                  - target_label: __address__
                    replacement: '127.0.0.1:\(shards[shard].port)'
            """
        }.joined(separator: "\n")
        let prometheus = try PrometheusServer.start(
            configuration: "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n" + jobs + "\n")
        defer { prometheus.stop() }

        var perHost: [String: Double] = [:]
        try? await waitUntil(timeout: .seconds(60), every: .milliseconds(500), "every host up in Prometheus") {
            let result = try prometheus.query("count by (instance) (hostscope_up == 1)")
            perHost = Dictionary(
                uniqueKeysWithValues: result.compactMap { series in
                    guard let labels = series["metric"] as? [String: String], let instance = labels["instance"],
                        let value = ((series["value"] as? [Any])?.last as? String).flatMap(Double.init)
                    else { return nil }
                    return (instance, value)
                })
            return perHost.count == 6
        }
        #expect(perHost == Dictionary(uniqueKeysWithValues: (1...6).map { ("h\($0)", 1.0) }))
        // Each serve watches only the hosts its shard probes: together every host, none twice.
        var watched: [String] = []
        for shard in shards {
            let document = try JSONParser.parse(try shard.get("/api/v1/hosts").body)
            watched += document["hosts"]?.arrayValue?.compactMap { $0["host"]?.stringValue } ?? []
        }
        #expect(watched.sorted() == (1...6).map { "h\($0)" })
        #expect(try prometheus.activeTargets().count == 6)
    }

    @Test func badRequestsGetAClearErrorAndEveryDownHostIsUpZero() throws {
        // Nothing listens on this port: every collection fails to connect.
        let closed = try LoopbackListener.freePort()
        let tokenPath = directory + "/token"
        let token = "0123456789abcdef0123456789abcdef"
        try token.write(toFile: tokenPath, atomically: true, encoding: .utf8)
        chmod(tokenPath, 0o600)
        let serve = try RunningServe(
            [
                "nobody@127.0.0.1:\(closed)", "nobody@localhost:\(closed)", "--every", "1s", "--listen", "127.0.0.1:0",
                "--token-file", tokenPath, "--connect-timeout", "1s",
            ],
            directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        let auth = ["Authorization: Bearer \(token)"]

        let metrics = try serve.waitFor("/metrics", headers: auth) {
            $0.body.contains(
                "hostscope_collection_errors_total{instance=\"nobody@localhost:\(closed)\",kind=\"connect\"} 1")
                && $0.body.contains(
                    "hostscope_collection_errors_total{instance=\"nobody@127.0.0.1:\(closed)\",kind=\"connect\"} 1")
        }
        #expect(metrics.status == 200)
        #expect(metrics.body.contains("hostscope_up{instance=\"nobody@127.0.0.1:\(closed)\"} 0\n"))
        #expect(metrics.body.contains("hostscope_up{instance=\"nobody@localhost:\(closed)\"} 0\n"))

        func expectError(_ path: String, headers: [String] = auth, status: Int, code: String) throws {
            let response = try serve.get(path, headers: headers)
            #expect(response.status == status, "\(path): \(response.body)")
            let body = try JSONParser.parse(response.body)
            #expect(body["error"]?["code"]?.stringValue == code, "\(path): \(response.body)")
            #expect((body["error"]?["message"]?.stringValue ?? "").count > 10)
            #expect(!response.body.contains(token))
        }
        try expectError("/metrics", headers: [], status: 401, code: "unauthorized")
        try expectError(
            "/metrics", headers: ["Authorization: Bearer wrong-token-wrong-token"], status: 401, code: "unauthorized")
        try expectError("/probe?target=evil.example:22", status: 403, code: "target_not_in_fleet")
        try expectError("/probe?target=127.0.0.1", status: 403, code: "target_not_in_fleet")
        try expectError("/probe", status: 400, code: "bad_request")
        try expectError("/api/v1/spans?limit=-3", status: 400, code: "bad_request")
        try expectError("/api/v1/spans?since=%ZZ", status: 400, code: "bad_request")
        try expectError("/api/v1/spans?bogus=1", status: 400, code: "bad_request")
        try expectError(
            "/api/v1/spans?since=" + String(repeating: "9", count: 3000), status: 414, code: "query_too_long")
        try expectError("/api/v1/hosts/elsewhere", status: 404, code: "not_found")
        try expectError("/no/such/page", status: 404, code: "not_found")
        // The health endpoints need no token.
        #expect(try serve.get("/healthz").status == 200)
        // A request far past the target limit is refused before routing.
        let huge = try serve.get("/api/v1/hosts?" + String(repeating: "x", count: 6000), headers: auth)
        #expect(huge.status == 414 || huge.status == 431, "\(huge.status)")
        // Nothing in the log carries the token.
        #expect(!serve.log.contains(token))
        #expect(serve.stop() == 0)
    }

    @Test func aHostOfTheFleetIsProbedWithoutInstanceAndWithItsFigures() throws {
        let serve = try RunningServe(["local", "--every", "1s", "--listen", "127.0.0.1:0"], directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        let probe = try serve.waitFor("/probe?target=local") { $0.body.contains("node_memory_MemTotal_bytes ") }
        #expect(probe.status == 200)
        #expect(probe.body.contains("hostscope_up 1\n"))
        #expect(!probe.body.contains("instance="))
        let api = try JSONParser.parse(try serve.get("/api/v1/hosts/local").body)
        #expect(api["latest"]?["schema"]?.stringValue == "hostscope.snapshot/1")
        let history = try serve.waitFor("/api/v1/hosts/local/history?since=10m&limit=1") { response in
            ((try? JSONParser.parse(response.body))?["records"]?.arrayValue?.count ?? 0) == 1
        }
        let page = try JSONParser.parse(history.body)
        #expect(page["records"]?[0]?["host"]?.stringValue == "local")
        #expect(page["next_cursor"]?.stringValue != nil)
        let spans = try serve.waitFor("/api/v1/spans?kind=snapshot&limit=2") { response in
            ((try? JSONParser.parse(response.body))?["spans"]?.arrayValue?.count ?? 0) == 2
        }
        let first = try #require(try JSONParser.parse(spans.body)["spans"]?[0])
        let trace = try #require(first["trace_id"]?.stringValue)
        let traced = try JSONParser.parse(try serve.get("/api/v1/traces/\(trace)").body)
        #expect((traced["spans"]?.arrayValue?.count ?? 0) >= 1)
    }

    @Test func theEventStreamSendsRecordsAndResumesFromLastEventID() throws {
        let serve = try RunningServe(["local", "--every", "1s", "--listen", "127.0.0.1:0"], directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        let stream = try CurlCommand.get(serve.url("/api/v1/events?types=record,host_state"), timeout: 4, extra: ["-N"])
        #expect(stream.headers["content-type"] == "text/event-stream; charset=utf-8")
        let events = stream.body.components(separatedBy: "\n\n").filter { $0.contains("event: ") }
        let records = events.filter { $0.contains("event: record\n") }
        #expect(records.count >= 2, "\(stream.body.prefix(2000))")
        #expect(!events.contains { $0.contains("event: span\n") })
        // Resume after the first record: the next event is the one that followed it.
        let firstID = try #require(records.first?.split(separator: "\n").first { $0.hasPrefix("id: ") }?.dropFirst(4))
        let resumed = try CurlCommand.get(
            serve.url("/api/v1/events"), headers: ["Last-Event-ID: \(firstID)"], timeout: 2, extra: ["-N"])
        let ids = resumed.body.split(separator: "\n").filter { $0.hasPrefix("id: ") }.map { String($0.dropFirst(4)) }
        let sequence = Int(firstID.split(separator: "-").last ?? "") ?? -1
        #expect(ids.first == firstID.split(separator: "-").first.map { "\($0)-\(sequence + 1)" })
        #expect(!resumed.body.contains("event: reset"))
        let stale = try CurlCommand.get(
            serve.url("/api/v1/events"), headers: ["Last-Event-ID: 1-1"], timeout: 2, extra: ["-N"])
        #expect(stale.body.contains("event: reset\n"))
    }

    @Test func theEventStreamSendsSummaryRecordsExceptForTheHostsAskedForWhole() throws {
        let serve = try RunningServe(["local", "--every", "1s", "--listen", "127.0.0.1:0"], directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        func records(_ query: String) throws -> [JSONValue] {
            let stream = try CurlCommand.get(
                serve.url("/api/v1/events?types=record" + query), timeout: 3, extra: ["-N"])
            return try stream.body.components(separatedBy: "\n\n").compactMap { event in
                guard event.contains("event: record\n"),
                    let data = event.split(separator: "\n").first(where: { $0.hasPrefix("data: ") })
                else { return nil }
                return try JSONParser.parse(String(data.dropFirst(6)))
            }
        }
        let summaries = try records("&view=summary").filter { $0["error"] == nil }
        #expect(!summaries.isEmpty)
        for record in summaries {
            #expect(record["host"] == "local")
            #expect(record["cpu"]?["busy_percent"] != nil)
            #expect(record["processes"] == nil && record["kernel"] == nil)
        }
        let whole = try records("&view=summary&full=local").filter { $0["error"] == nil }
        #expect(!whole.isEmpty)
        #expect(whole.allSatisfy { $0["processes"]?.arrayValue?.isEmpty == false })
        let refused = try serve.get("/api/v1/events?view=short")
        #expect(refused.status == 400)
        #expect(refused.body.contains("view must be full or summary"))
    }

    @Test func sighupReloadsTheHostListKeepingSessionsAndABrokenFileKeepsTheOldOne() throws {
        let hostsFile = directory + "/hosts"
        let server = try SSHTestServer.shared()
        try "\(server.target)\n".write(toFile: hostsFile, atomically: true, encoding: .utf8)
        let serve = try RunningServe(
            ["--hosts-file", hostsFile, "--every", "1s", "--listen", "127.0.0.1:0"] + CLI.harnessArguments(server),
            directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        func hosts() throws -> [String] {
            try JSONParser.parse(try serve.get("/api/v1/hosts").body)["hosts"]?.arrayValue?.compactMap {
                $0["host"]?.stringValue
            } ?? []
        }
        func ticks(_ host: String) throws -> Int {
            try JSONParser.parse(try serve.get("/api/v1/hosts/\(host)").body)["ticks"]?.intValue ?? 0
        }
        /// The stored connect spans of the SSH host: one per session opened.
        func connects() throws -> Int {
            let page = try JSONParser.parse(try serve.get("/api/v1/spans?name=ssh%20connect&limit=100").body)
            return page["spans"]?.arrayValue?.count ?? -1
        }
        _ = try serve.waitFor("/api/v1/hosts/\(server.target)") { $0.body.contains("\"ticks\":2") }
        let before = try ticks(server.target)

        try "\(server.target)\nlocal\n".write(toFile: hostsFile, atomically: true, encoding: .utf8)
        serve.process.signal(SIGHUP)
        _ = try serve.waitFor("/api/v1/hosts/local") { $0.body.contains("\"schema\":\"hostscope.snapshot/1\"") }
        #expect(try hosts() == [server.target, "local"])
        // The SSH host kept its loop and its session: its ticks went on, and it connected once in all.
        _ = try serve.waitFor("/api/v1/hosts/\(server.target)") { response in
            ((try? JSONParser.parse(response.body))?["ticks"]?.intValue ?? 0) >= before + 2
        }
        _ = try serve.waitFor("/api/v1/spans?name=ssh%20connect&limit=100") { $0.body.contains("\"trace_id\"") }
        #expect(try connects() == 1)

        try "web1 web2\n".write(toFile: hostsFile, atomically: true, encoding: .utf8)
        serve.process.signal(SIGHUP)
        try waitUntilBlocking(timeout: .seconds(10), "reload failed in the log") { serve.log.contains("reload failed") }
        let failure = try #require(
            serve.logLines().first { $0["message"]?.stringValue?.hasPrefix("reload failed") == true })
        #expect(failure["reason"]?.stringValue?.contains("more than one host") == true)
        #expect(try hosts() == [server.target, "local"])

        // Dropping the SSH host stops it: it leaves the API and /metrics.
        try "local\n".write(toFile: hostsFile, atomically: true, encoding: .utf8)
        serve.process.signal(SIGHUP)
        _ = try serve.waitFor("/api/v1/hosts") { !$0.body.contains(server.target) }
        // A scrape's figures may lag the watch by up to a second (serve keeps the document that long).
        _ = try serve.waitFor("/metrics", timeout: 5) { !$0.body.contains("instance=\"\(server.target)\"") }
        #expect(serve.stop() == 0)
    }

    @Test func otlpEndpointPushesEveryCollectionAsSystemMetricsUntilTheDrain() async throws {
        try await withPythonServer("otlp_receiver.py") { receiver in
            let serve = try RunningServe(
                [
                    "local", "--every", "1s", "--listen", "127.0.0.1:0", "--no-history", "--otlp-endpoint",
                    receiver.baseURL,
                ], directory: directory)
            try serve.waitUntilListening()
            _ = try serve.waitFor("/api/v1/hosts") { $0.body.contains("\"ticks\":2") }
            #expect(serve.stop() == 0, "\(serve.log.suffix(2000))")
            let resources = try CLI.receivedResourceMetrics(receiver)
            // The drain sends what is queued: every collection that ended, at least the two waited for.
            #expect(resources.count >= 2, "\(resources.count) collection(s) received")
            for resource in resources {
                let attributes = (resource["resource"] as? [String: Any])?["attributes"] as? [String: Any]
                #expect(attributes?["host.name"] as? String == "local")
                let names = Set((resource["metrics"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String })
                #expect(names.isSuperset(of: ["system.cpu.time", "system.memory.usage", "system.network.io"]))
            }
        }
    }

    @Test func theLogStartsWithOneLineKeepsNumbersAsNumbersAndReadyzRefusalsAtDebug() throws {
        // Daily, `local` is not due for hours: /readyz refuses meanwhile.
        let serve = try RunningServe(
            ["local", "--every", "1d", "--listen", "127.0.0.1:0", "--no-history"], directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        #expect(try serve.get("/readyz").status == 503)
        #expect(try serve.get("/nothing-here").status == 404)
        var lines: [JSONValue] = []
        try #require(
            (0..<100).contains { _ in
                lines = serve.logLines()
                if lines.contains(where: { $0["path"]?.stringValue == "/nothing-here" }) { return true }
                Thread.sleep(forTimeInterval: 0.1)
                return false
            }, "the requests are logged: \(serve.log)")
        let info = lines.filter { $0["level"]?.stringValue == "info" && $0["path"] == nil }
        #expect(info.map { $0["message"]?.stringValue } == ["listening"], "one start-up line: \(serve.log)")
        let listening = try #require(info.first)
        #expect(listening["auth"] == .bool(false) && listening["tls"] == .bool(false), "\(serve.log)")
        #expect(listening["hosts"]?.intValue == 1 && listening["hosts"]?.stringValue == nil, "\(serve.log)")
        let readyz = try #require(lines.first { $0["path"]?.stringValue == "/readyz" })
        #expect(readyz["level"]?.stringValue == "debug", "\(readyz)")
        #expect(readyz["status"]?.intValue == 503 && readyz["duration_ms"]?.stringValue == nil, "\(readyz)")
        #expect(readyz["duration_ms"]?.doubleValue != nil, "\(readyz)")
        let missing = try #require(lines.first { $0["path"]?.stringValue == "/nothing-here" })
        #expect(missing["level"]?.stringValue == "info" && missing["status"]?.intValue == 404, "\(missing)")
    }

    @Test func serveHelpKeepsItsEndpointListInsideEightyColumns() throws {
        let help = try CLI.run(["serve", "--help"], environment: ["COLUMNS": "80"])
        let lines = help.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex { $0.hasPrefix("  /metrics") })
        let block = lines[start...].prefix { !$0.isEmpty }
        #expect(block.count == 4, "\(block.joined(separator: "\n"))")
        #expect(block.allSatisfy { $0.hasPrefix("  /") }, "no line of the list wraps to column 0")
    }

    @Test func sigtermEndsOpenEventStreamsAndExitsZero() async throws {
        let serve = try RunningServe(["local", "--every", "1s", "--listen", "127.0.0.1:0"], directory: directory)
        try serve.waitUntilListening()
        let url = serve.url("/api/v1/events")
        let started = Date()
        let stream = Task.detached { try CurlCommand.get(url, timeout: 30, extra: ["-N"]) }
        _ = try serve.waitFor("/api/v1/hosts") { $0.body.contains("\"ticks\":2") }
        let status = serve.stop()
        let response = try await stream.value
        #expect(status == 0, "\(serve.log.suffix(2000))")
        // The stream ended with the drain, long before curl's own limit.
        #expect(Date().timeIntervalSince(started) < 20)
        #expect(response.status == 200)
        #expect(response.body.contains("event: record\n"))
        #expect(serve.logLines().contains { $0["message"]?.stringValue == "watch stopped" })
    }

    @Test func aServeOfManyHostsExitsWithinSecondsOfSIGTERMWithEveryCollectedTickStored() async throws {
        let count = 150
        let server = try SSHTestServer.shared()
        let config = try fleetConfig(server, count: count)
        let db = directory + "/many.sqlite"
        let serve = try RunningServe(
            (1...count).map { "h\($0)" } + [
                "--ssh-config", config, "--every", "2s", "--listen", "127.0.0.1:0", "--db", db,
            ],
            directory: directory)
        try serve.waitUntilListening()
        // Every host has ticked at least twice (sessions open, records written) before the signal.
        var ticks = 0
        try await waitUntil(timeout: .seconds(120), "two ticks of each of \(count) hosts") {
            let hosts =
                try JSONParser.parse(try serve.get("/api/v1/hosts?view=summary").body)["hosts"]?.arrayValue ?? []
            let each = hosts.map { Int($0["ticks"]?.doubleValue ?? 0) }
            ticks = each.reduce(0, +)
            return each.count == count && each.allSatisfy { $0 >= 2 }
        }
        let signalled = ContinuousClock.now
        let status = serve.stop()
        let took = ContinuousClock.now - signalled
        #expect(status == 0, "\(serve.log.suffix(2000))")
        #expect(took < .seconds(5), "serve took \(took) to exit after SIGTERM with \(count) hosts")
        let database = try await StorageDatabase.open(at: db, mode: .existingOnly)
        let stored = try await database.history.count()
        try await database.close()
        #expect(stored >= ticks, "the database holds \(stored) records of the \(ticks) ticks seen before SIGTERM")
    }

    @Test func tlsServesHTTPSAndRefusesAKeyOthersCanRead() throws {
        let (certificate, key) = try ServeTLSFiles.make(in: directory, name: "cert")
        chmod(key, 0o644)
        let loose = try CLI.run(
            ["serve", "local", "--listen", "127.0.0.1:0", "--no-history", "--tls-cert", certificate, "--tls-key", key],
            timeout: 30)
        #expect(loose.status == 1)
        #expect(loose.stderr.contains("chmod 600"), "\(loose.stderr)")

        chmod(key, 0o600)
        let serve = try RunningServe(
            ["local", "--every", "1s", "--listen", "127.0.0.1:0", "--tls-cert", certificate, "--tls-key", key],
            directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        let https = "https://127.0.0.1:\(serve.port)"
        let health = try CurlCommand.get(https + "/healthz", extra: ["--cacert", certificate])
        #expect(health.status == 200)
        #expect(health.body == "ok\n")
        let metrics = try CurlCommand.get(https + "/metrics", extra: ["--cacert", certificate])
        #expect(metrics.body.contains("hostscope_build_info"))
        // Plain HTTP to the TLS port gets no HTTP answer.
        #expect(try CurlCommand.get(serve.url("/healthz"), timeout: 3).status == 0)
        #expect(serve.stop() == 0)
    }

    @Test func startupRefusalsSayWhatToDo() throws {
        let busy = LoopbackListenerHolder()
        let inUse = try CLI.run(["serve", "local", "--listen", "127.0.0.1:\(busy.port)", "--no-history"], timeout: 30)
        #expect(inUse.status == 1)
        #expect(inUse.stderr.contains("in use"), "\(inUse.stderr)")

        let open = try CLI.run(["serve", "local", "--listen", "0.0.0.0:0", "--no-history"])
        #expect(open.status == 64)
        #expect(open.stderr.contains("--token-file"))

        let loose = directory + "/loose-token"
        try "0123456789abcdef0123456789abcdef\n".write(toFile: loose, atomically: true, encoding: .utf8)
        chmod(loose, 0o644)
        let looseRun = try CLI.run(["serve", "local", "--listen", "0.0.0.0:0", "--token-file", loose, "--no-history"])
        #expect(looseRun.status == 64)
        #expect(looseRun.stderr.contains("chmod 600"))

        let missing = try CLI.run(["serve", "--hosts-file", directory + "/no-such-file", "--no-history"])
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("cannot read the hosts file"))
    }
}

/// A bound loopback socket held open for the test, so that its port is in use.
final class LoopbackListenerHolder {
    let listener: LoopbackListener
    var port: Int { listener.port }
    init() { listener = try! LoopbackListener() }
}
