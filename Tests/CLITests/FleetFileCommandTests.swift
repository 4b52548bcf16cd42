import Foundation
import OrderedJSON
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `--fleet FILE` on the commands, against real processes: serve's labels, settings and SIGHUP reload, watch's
/// CSV columns and flags winning, filters, and the sentence of a bad file.
@Suite(.serialized) struct FleetFileCommandTests {
    let directory: String

    init() throws {
        directory = NSTemporaryDirectory() + "hostscope-fleetcli-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    func write(_ text: String, to name: String = "fleet.yaml") throws -> String {
        let path = directory + "/" + name
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// An ssh_config with `h1`, an alias of the harness sshd.
    func sshConfig(_ server: SSHTestServer) throws -> String {
        try write(
            """
            Host h1
                HostName \(server.host)
                Port \(server.port)
                User \(server.user)
                IdentityFile \(server.keyPath)
                UserKnownHostsFile \(server.knownHostsPath)

            """, to: "ssh_config")
    }

    func labels(_ serve: RunningServe, _ host: String) throws -> [String: String] {
        let value = try JSONParser.parse(try serve.get("/api/v1/hosts/\(host)").body)
        var labels: [String: String] = [:]
        for (name, label) in value["labels"]?.objectValue ?? [:] { labels[name] = label.stringValue }
        return labels
    }

    @Test func serveTakesItsSettingsAndLabelsFromTheFileAndSighupReloadsThem() throws {
        let fleet = try write(
            """
            groups:
              here:
                hosts: [local]
                labels: {env: prod, device: fleet-disk}
                interval: 1s
            serve:
              listen: 127.0.0.1:0
            """)
        // No --listen: the file's port 0 is used (the default port could be taken).
        let serve = try RunningServe(["--fleet", fleet], directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        let metrics = try serve.waitFor("/metrics", timeout: 30) { $0.body.contains("node_memory_MemTotal_bytes{") }
        // Target labels after instance on every series; a series with its own `device` gets `exported_device`.
        #expect(
            metrics.body.contains("node_memory_MemTotal_bytes{instance=\"local\",device=\"fleet-disk\",env=\"prod\"}"))
        #expect(metrics.body.contains("hostscope_up{instance=\"local\",device=\"fleet-disk\",env=\"prod\"} 1"))
        let disk = try #require(
            metrics.body.split(separator: "\n").first { $0.hasPrefix("node_filesystem_size_bytes{") })
        #expect(disk.contains("exported_device=\"fleet-disk\""), "\(disk)")
        #expect(disk.contains(",device=\"/"), "\(disk)")
        let probe = try serve.get("/probe?target=local")
        #expect(probe.body.contains("hostscope_up{device=\"fleet-disk\",env=\"prod\"} 1"), "\(probe.body.prefix(400))")
        #expect(try labels(serve, "local") == ["env": "prod", "device": "fleet-disk"])

        // SIGHUP reads the whole file again: the new labels, on the same session.
        _ = try write(
            """
            groups:
              here:
                hosts: [local]
                labels: {env: staging}
                interval: 1s
            serve:
              listen: 127.0.0.1:0
            """)
        serve.process.signal(SIGHUP)
        _ = try serve.waitFor("/api/v1/hosts/local") { $0.body.contains("\"labels\":{\"env\":\"staging\"}") }
        _ = try serve.waitFor("/metrics", timeout: 5) {
            $0.body.contains("hostscope_up{instance=\"local\",env=\"staging\"} 1")
        }

        // A broken file keeps the running fleet and says why, with the line.
        _ = try write("groups:\n  here:\n    hosts: [local]\n    labels: {env: prod}\n    every: 5s\n")
        serve.process.signal(SIGHUP)
        try waitUntilBlocking(timeout: .seconds(10), "reload failed in the log") { serve.log.contains("reload failed") }
        let failure = try #require(
            serve.logLines().first { $0["message"]?.stringValue?.hasPrefix("reload failed") == true })
        #expect(
            failure["reason"]?.stringValue?.hasPrefix("the fleet file \(fleet), line 5: \"every\" is not a key")
                == true,
            "\(failure)")
        #expect(try labels(serve, "local") == ["env": "staging"])
        #expect(serve.stop() == 0)
    }

    @Test func serveSendsLabelsAsResourceAttributesToTheFilesOTLPEndpoint() async throws {
        try await withPythonServer("otlp_receiver.py") { receiver in
            let fleet = try write(
                """
                groups:
                  here: {hosts: [local], labels: {env: prod, host_name: x}, interval: 1s}
                serve:
                  listen: 127.0.0.1:0
                  history: {enabled: false}
                  otlp: {endpoint: '\(receiver.baseURL)'}
                """)
            let serve = try RunningServe(["--fleet", fleet, "--no-history"], directory: directory)
            try serve.waitUntilListening()
            _ = try serve.waitFor("/api/v1/hosts") { $0.body.contains("\"ticks\":2") }
            #expect(serve.stop() == 0, "\(serve.log.suffix(2000))")
            let resources = try CLI.receivedResourceMetrics(receiver)
            #expect(resources.count >= 2, "\(resources.count) collection(s) received")
            for resource in resources {
                let attributes = (resource["resource"] as? [String: Any])?["attributes"] as? [String: Any]
                #expect(attributes?["env"] as? String == "prod")
                #expect(attributes?["host_name"] as? String == "x")
                #expect(attributes?["host.name"] as? String == "local")
            }
        }
    }

    @Test func serveFlagsWinOverTheFilesSettings() throws {
        // The file's port is not HOST:PORT and its interval an hour: --listen and --every must win.
        let fleet = try write(
            """
            defaults: {interval: 1h}
            groups:
              here: {hosts: [local], interval: 1h}
            serve:
              listen: not-an-address
              token_file: /nonexistent/token
            """)
        let serve = try RunningServe(
            ["--fleet", fleet, "--listen", "127.0.0.1:0", "--every", "300ms", "--token-file", tokenFile()],
            directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        let token = try String(contentsOfFile: tokenFile(), encoding: .utf8).trimmingCharacters(in: .newlines)
        _ = try serve.waitFor("/api/v1/hosts/local", headers: ["Authorization: Bearer \(token)"]) {
            $0.body.contains("\"ticks\":2")
        }
        #expect(serve.stop() == 0)
        // Without the flag, the file's listen is used, and refused with a sentence naming the file.
        let refused = try CLI.run(["serve", "--fleet", fleet, "--no-history"])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("listen: not-an-address in \(fleet) is not HOST:PORT"), "\(refused.stderr)")
    }

    /// A token file of mode 0600.
    func tokenFile() throws -> String {
        let path = directory + "/token"
        if !FileManager.default.fileExists(atPath: path) {
            try (String(repeating: "t0k3n", count: 8) + "\n").write(toFile: path, atomically: true, encoding: .utf8)
            chmod(path, 0o600)
        }
        return path
    }

    @Test func watchWritesLabelColumnsAndItsFlagsWinOverTheFile() throws {
        let fleet = try write(
            """
            defaults: {interval: 1h}
            groups:
              here:
                hosts: [local]
                labels: {env: prod, role: web}
                interval: 1h
            """)
        let csv = directory + "/out.csv"
        // With the file's 1h interval a second tick would come an hour later: --every wins, so it ends at once.
        let result = try CLI.run(
            ["watch", "--fleet", fleet, "--every", "200ms", "--count", "2", "-o", csv, "--no-history"], timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try String(contentsOfFile: csv, encoding: .utf8).split(separator: "\r\n")
        #expect(lines.count == 3)
        #expect(lines[0].hasSuffix(",label.env,label.role"), "\(lines[0].suffix(80))")
        #expect(lines[1].contains(",local,"))
        #expect(lines[1].hasSuffix(",prod,web"), "\(lines[1].suffix(80))")
    }

    /// The lines of `path`, split on `separator`.
    func lines(_ path: String, separator: String = "\n") -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").components(separatedBy: separator).filter {
            !$0.isEmpty
        }
    }

    @Test func watchWritesLabelsInTheLongCSVLayoutAndInNDJSONRecords() throws {
        let server = try SSHTestServer.shared()
        let config = try sshConfig(server)
        let fleet = try write(
            """
            groups:
              there: {hosts: [h1], labels: {env: prod, role: web}}
            """)
        let csv = directory + "/long.csv"
        let ndjson = directory + "/out.ndjson"
        let result = try CLI.run(
            [
                "watch", "--fleet", fleet, "-F", config, "--every", "1s", "--count", "2", "--csv-layout", "long",
                "-o", csv, "-o", ndjson, "--no-history",
            ], timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        let rows = lines(csv, separator: "\r\n")
        #expect(rows.first == "timestamp,host,kind,device,metric,value,label.env,label.role", "\(rows.first ?? "")")
        // The second tick has rates, so disks and interfaces give rows; every one ends in the host's labels.
        #expect(rows.count > 2, "\(rows)")
        for row in rows.dropFirst() {
            #expect(row.contains(",h1,") && row.hasSuffix(",prod,web"), "\(row)")
        }
        let records = lines(ndjson).compactMap { try? JSONParser.parse($0) }
        #expect(records.count == 2)
        for record in records {
            #expect(record["schema"]?.stringValue == "hostscope.snapshot/1")
            #expect(record["error"] == nil, "\(record)")
            #expect(record["labels"] == .object(["env": "prod", "role": "web"]), "\(record["labels"] as Any)")
        }
        // Without a fleet file, records are written as before: no `labels` key.
        let plain = try CLI.run(["watch", "h1", "-F", config, "--count", "1", "-f", "ndjson", "--no-history"])
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(try JSONParser.parse(plain.stdout.trimmingCharacters(in: .newlines))["labels"] == nil)
    }

    @Test func watchReloadsTheFleetFileOnSighupAndKeepsItWhenTheNewOneIsBad() throws {
        let server = try SSHTestServer.shared()
        let config = try sshConfig(server)
        let fleet = try write("groups:\n  here: {hosts: [local], labels: {env: a}}\n")
        let ndjson = directory + "/reload.ndjson"
        let errors = directory + "/reload.err"
        let watch = try RunningCLI(
            ["watch", "--fleet", fleet, "-F", config, "--every", "300ms", "-o", ndjson, "--no-history"],
            stderr: errors)
        defer {
            watch.signal(SIGKILL)
            _ = watch.wait()
        }
        func records() -> [JSONValue] { lines(ndjson).compactMap { try? JSONParser.parse($0) } }
        func waitUntil(_ what: String, _ condition: () -> Bool) throws {
            do {
                try waitUntilBlocking(what) {
                    if watch.hasExited { throw HarnessError(description: "watch ended: \(what)") }
                    return condition()
                }
            } catch {
                Issue.record("\(what): \(lines(errors))")
                throw error
            }
        }
        try waitUntil("no record of local") { records().contains { $0["host"]?.stringValue == "local" } }

        // A host added, the labels changed: from the next records on.
        _ = try write("groups:\n  here: {hosts: [local, h1], labels: {env: b}}\n")
        watch.signal(SIGHUP)
        try waitUntil("no record of h1 with env b") {
            records().contains { $0["host"]?.stringValue == "h1" && $0["labels"]?["env"]?.stringValue == "b" }
        }
        try waitUntil("no record of local with env b") {
            records().contains { $0["host"]?.stringValue == "local" && $0["labels"]?["env"]?.stringValue == "b" }
        }
        #expect(
            lines(errors).contains { $0.hasSuffix("reloaded the fleet: 2 host(s), 1 added, 0 removed") },
            "\(lines(errors))")

        // A bad file keeps the running fleet and says why, in one sentence.
        _ = try write("groups:\n  here: {hosts: [local], every: 5s}\n")
        watch.signal(SIGHUP)
        try waitUntil("no sentence about the failed reload") {
            lines(errors).contains { $0.contains("the reload failed; keeping the 2 hosts watched: the fleet file") }
        }
        let count = records().count
        try waitUntil("h1 is no longer watched") {
            records().dropFirst(count).contains { $0["host"]?.stringValue == "h1" }
        }

        // Removing a host stops it.
        _ = try write("groups:\n  here: {hosts: [h1], labels: {env: c}}\n")
        watch.signal(SIGHUP)
        try waitUntil("no sentence about the reload") {
            lines(errors).contains { $0.hasSuffix("reloaded the fleet: 1 host(s), 0 added, 1 removed") }
        }
        let after = records().count
        try waitUntil("no record of h1 with env c") {
            records().contains { $0["host"]?.stringValue == "h1" && $0["labels"]?["env"]?.stringValue == "c" }
        }
        Thread.sleep(forTimeInterval: 1)
        #expect(!records().dropFirst(after + 1).contains { $0["host"]?.stringValue == "local" })
        watch.signal(SIGTERM)
        #expect(watch.wait() == 0, "\(lines(errors))")
    }

    @Test func snapshotWithAFleetFileTakesEachGroupsCollectorSettingsUnlessAFlagGivesThem() throws {
        let server = try SSHTestServer.shared()
        let config = try sshConfig(server)
        let fleet = try write(
            """
            defaults: {top: 4}
            groups:
              there: {hosts: [h1], top: 2, collector: tools}
              here: {hosts: [local]}
            """)
        func records(_ extra: [String]) throws -> [String: JSONValue] {
            let result = try CLI.run(["snapshot", "--fleet", fleet, "-F", config, "--format", "ndjson"] + extra)
            #expect(result.status == 0, "\(result.stderr)")
            var byHost: [String: JSONValue] = [:]
            for line in result.stdout.split(separator: "\n") {
                let record = try JSONParser.parse(String(line))
                byHost[record["host"]?.stringValue ?? ""] = record
            }
            return byHost
        }
        let fromFile = try records([])
        #expect(fromFile["h1"]?["processes"]?.arrayValue?.count == 2)
        #expect(fromFile["h1"]?["collector"]?.stringValue == "tools")
        // A host of a group without settings takes defaults:'s.
        #expect(fromFile["local"]?["processes"]?.arrayValue?.count == 4)
        #expect(fromFile["local"]?["collector"]?.stringValue == "proc")
        let flagged = try records(["--top", "3", "--collector", "proc"])
        #expect(flagged["h1"]?["processes"]?.arrayValue?.count == 3)
        #expect(flagged["h1"]?["collector"]?.stringValue == "proc")
        #expect(flagged["local"]?["processes"]?.arrayValue?.count == 3)
    }

    @Test func serveTakesTheRulesAndRetentionOfAReloadedFileAndSaysWhichSettingsNeedARestart() throws {
        _ = try write("rules:\n  - alert: MemoryInUse\n    when: memory_used_percent >= 0\n", to: "rules.yaml")
        let start = """
            groups:
              here: {hosts: [local], interval: 1s}
            serve:
              listen: 127.0.0.1:0
              history: {retain: 7d}
            """
        let fleet = try write(start)
        let serve = try RunningServe(["--fleet", fleet, "--db", directory + "/serve.sqlite"], directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        _ = try write(
            """
            groups:
              here: {hosts: [local], interval: 1s}
            serve:
              listen: 127.0.0.1:1
              history: {retain: 1d}
              rules: rules.yaml
              token_file: token
            """)
        serve.process.signal(SIGHUP)
        try waitUntilBlocking(timeout: .seconds(15), "the rules reloaded") {
            serve.log.contains("reloaded the alert rules")
        }
        let messages = serve.logLines().compactMap { $0["message"]?.stringValue }
        #expect(messages.contains("history records are now kept for 24h"), "\(messages)")
        let reloaded = try #require(
            serve.logLines().first { $0["message"]?.stringValue == "reloaded the alert rules" }, "\(serve.log)")
        #expect(reloaded["rules"]?.intValue == 1 || reloaded["rules"]?.stringValue == "1", "\(reloaded)")
        for key in ["listen", "token_file"] {
            #expect(
                messages.contains(
                    "the fleet file's serve: \(key) changed; it is read at start only, so restart serve to apply it"),
                "\(messages)")
        }
        // --db is a flag: the file's history.path is never the flag's business; the retention a flag did not give.
        #expect(!messages.contains { $0.contains("serve: history.retain") || $0.contains("serve: rules") })
        // Still listening where it started.
        #expect(try serve.get("/healthz").status == 200)
        #expect(serve.stop() == 0)
    }

    @Test func serveReadsTheTextfileDirectoryOfTheGroupOrOfTheFlag() throws {
        let server = try SSHTestServer.shared()
        let config = try sshConfig(server)
        // Readable by the harness's own user: the host reads it over SSH.
        let fromFile = directory + "/textfiles-file"
        let fromFlag = directory + "/textfiles-flag"
        for (folder, value) in [(fromFile, 1), (fromFlag, 2)] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try "backup_ok{target=\"db\"} \(value)\n".write(
                toFile: folder + "/backup.prom", atomically: true, encoding: .utf8)
        }
        chmod(directory, 0o755)
        let fleet = try write(
            """
            groups:
              there: {hosts: [h1], interval: 1s, textfile_directory: \(fromFile)}
            """)
        for (arguments, value) in [([String](), 1), (["--textfile-directory", fromFlag], 2)] {
            let serve = try RunningServe(
                ["--fleet", fleet, "-F", config, "--listen", "127.0.0.1:0", "--no-history"] + arguments,
                directory: directory)
            defer { _ = serve.stop() }
            try serve.waitUntilListening()
            let metrics = try serve.waitFor("/metrics", timeout: 30) { $0.body.contains("backup_ok{") }
            #expect(metrics.body.contains("backup_ok{instance=\"h1\",target=\"db\"} \(value)"), "\(arguments)")
            #expect(metrics.body.contains("node_textfile_scrape_error{instance=\"h1\"} 0"))
            #expect(serve.stop() == 0)
        }
        // A directory the probe cannot hold is refused before anything starts, in the file and as a flag.
        let refused = try CLI.run(["watch", "local", "--textfile-directory", "relative/dir", "--no-history"])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("--textfile-directory relative/dir cannot be used: give an absolute path"))
        let bad = try write("groups:\n  g: {hosts: [local], textfile_directory: '/a b'}\n", to: "bad.yaml")
        let badFile = try CLI.run(["snapshot", "--fleet", bad])
        #expect(badFile.status == 64)
        #expect(
            badFile.stderr.contains("the fleet file \(bad), line 2: textfile_directory: /a b cannot be used"),
            "\(badFile.stderr)")
    }

    @Test func labelFiltersPickHostsInSnapshotAndHistory() throws {
        let server = try SSHTestServer.shared()
        let config = try sshConfig(server)
        let fleet = try write(
            """
            groups:
              here: {hosts: [local], labels: {env: prod}}
              there: {hosts: [h1], labels: {env: staging}}
            """)
        let database = directory + "/history.sqlite"
        let snapshot = try CLI.run(
            ["snapshot", "--fleet", fleet, "-F", config, "--label", "env=staging", "--format", "ndjson"])
        #expect(snapshot.status == 0, "\(snapshot.stderr)")
        let hosts = snapshot.stdout.split(separator: "\n").compactMap {
            try? JSONParser.parse(String($0))["host"]?.stringValue
        }
        #expect(hosts == ["h1"])

        let watch = try CLI.run(
            [
                "watch", "--fleet", fleet, "-F", config, "--every", "300ms", "--count", "2", "--db", database, "-f",
                "ndjson",
            ])
        #expect(watch.status == 0, "\(watch.stderr)")
        let all = try CLI.run(["history", "--db", database, "--format", "ndjson"])
        #expect(
            Set(all.stdout.split(separator: "\n").compactMap { try? JSONParser.parse(String($0))["host"]?.stringValue })
                == ["local", "h1"])
        let prod = try CLI.run(
            ["history", "--db", database, "--format", "ndjson", "--fleet", fleet, "--label", "env=prod"])
        #expect(prod.status == 0, "\(prod.stderr)")
        let prodHosts = prod.stdout.split(separator: "\n").compactMap {
            try? JSONParser.parse(String($0))["host"]?.stringValue
        }
        #expect(prodHosts.count == 2)
        #expect(Set(prodHosts) == ["local"])

        let none = try CLI.run(["snapshot", "--fleet", fleet, "-F", config, "--label", "env=dev"])
        #expect(none.status == 64)
        #expect(
            none.stderr.contains(
                "no host of the fleet has the labels env=dev; the labels its hosts have are env=prod, env=staging"),
            "\(none.stderr)")
    }

    @Test func mcpListsTheFleetsHostsWithTheirLabels() throws {
        let fleet = try write(
            """
            groups:
              here: {hosts: [local], labels: {env: prod, role: box}}
              elsewhere: {hosts: [other], labels: {env: dev}}
            """)
        let requests = [
            #"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_hosts","arguments":{}}}"#,
        ]
        let script =
            "(printf '%s\\n' \(requests.map(CLI.shellQuoted).joined(separator: " ")); sleep 2) | "
            + ([CLI.binary, "mcp", "--fleet", fleet, "--label", "env=prod", "--no-history"].map(CLI.shellQuoted)
                .joined(separator: " "))
        let result = try CLI.runShell(script)
        #expect(result.status == 0, "\(result.stderr)")
        let answer = try JSONParser.parse(String(try #require(result.stdout.split(separator: "\n").last)))
        let hosts = try #require(answer["result"]?["structuredContent"]?["hosts"]?.arrayValue)
        #expect(hosts.compactMap { $0["name"]?.stringValue } == ["local"])
        #expect(hosts.first?["labels"]?["env"]?.stringValue == "prod")
        #expect(hosts.first?["labels"]?["role"]?.stringValue == "box")
    }

    @Test func aBadFleetFileIsOneSentenceWithItsLineAndStatus64() throws {
        let fleet = try write("groups:\n  web:\n    hosts: [local]\n    labels: {1env: x}\n")
        for command in ["watch", "top", "snapshot", "serve", "mcp"] {
            let storing = ["watch", "serve", "mcp"].contains(command)
            let result = try CLI.run([command, "--fleet", fleet] + (storing ? ["--no-history"] : []))
            #expect(result.status == 64, "\(command): \(result.stderr)")
            #expect(
                result.stderr.contains(
                    "the fleet file \(fleet), line 4: the label name \"1env\" cannot be used: a label name is letters"),
                "\(command): \(result.stderr)")
        }
        let missing = try CLI.run(["watch", "--fleet", directory + "/nope.yaml"])
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("cannot read the fleet file \(directory)/nope.yaml; check the path"))
    }
}

extension CLI {
    /// The resource metrics an `otlp_receiver.py` received, each as its JSON object.
    static func receivedResourceMetrics(_ receiver: PythonServer) throws -> [[String: Any]] {
        let result = try runShell("curl -s \(receiver.baseURL)/received")
        let received = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] ?? [:]
        return (received["metric_requests"] as? [[String: Any]] ?? []).flatMap {
            $0["resource_metrics"] as? [[String: Any]] ?? []
        }
    }
}
