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
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, !serve.log.contains("reload failed") { Thread.sleep(forTimeInterval: 0.1) }
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
