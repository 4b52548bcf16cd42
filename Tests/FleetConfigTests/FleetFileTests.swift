import FleetConfig
import Foundation
import TestSupport
import Testing

@Suite("FleetFile")
struct FleetFileTests {
    private func parse(_ text: String, path: String = "/etc/hostscope/fleet.yaml") throws(FleetFileError) -> FleetFile {
        try FleetFile.parse(text, path: path)
    }

    /// The sentence a file gives, or a failure when it reads.
    private func problem(_ text: String) -> String {
        do {
            _ = try parse(text)
            Issue.record("the file was read: \(text)")
            return ""
        } catch {
            return error.message
        }
    }

    @Test("The example in docs/ reads, with every group, label, setting and serve key")
    func exampleReads() throws {
        let path = Repository.root.appendingPathComponent("docs/fleet.example.yaml").path
        let file = try FleetFile.parse(String(contentsOfFile: path, encoding: .utf8), path: path)
        #expect(file.groups.map(\.name) == ["web", "databases", "staging"])
        let entries = file.entries
        #expect(entries.map(\.text) == ["web1", "web2", "web3", "db-*,!db-old", "me@stage1:2222"])
        #expect(entries[0].labels == ["dc": "fra1", "env": "prod", "role": "web"])
        #expect(entries[2].labels == ["dc": "fra1", "env": "prod", "role": "web", "rack": "r7"])
        #expect(entries[0].settings == FleetSettings(interval: .seconds(15), timeout: .seconds(10), top: 5))
        #expect(entries[3].settings.interval == .seconds(30))
        #expect(entries[3].settings.collector == "proc")
        #expect(entries[4].labels == ["dc": "fra1", "env": "staging"])
        let folder = (path as NSString).deletingLastPathComponent + "/"
        #expect(file.serve.listen == "0.0.0.0:9464")
        #expect(file.serve.tokenFile == folder + "token")
        #expect(file.serve.tlsCertificate == folder + "tls/cert.pem")
        #expect(file.serve.historyPath == "/var/lib/hostscope/hostscope.sqlite")
        #expect(file.serve.historyRetention == .seconds(7 * 86400))
        #expect(file.serve.otlpEndpoint == "http://127.0.0.1:4318")
        #expect(file.serve.otlpHeadersFile == folder + "otlp-headers")
        #expect(file.serve.rules == folder + "rules.yaml")
        #expect(file.serve.alertmanagers == ["http://127.0.0.1:9093"])
        #expect(file.serve.filesRoots == ["/var/log", "/srv/app"])
    }

    @Test("The example validates against docs/fleet.schema.json, and a file the reader refuses does not")
    func exampleMatchesSchema() throws {
        let script = """
            import json, sys, yaml, jsonschema
            schema = json.load(open(sys.argv[1]))
            jsonschema.Draft202012Validator.check_schema(schema)
            validator = jsonschema.Draft202012Validator(schema)
            validator.validate(yaml.safe_load(open(sys.argv[2])))
            bad = yaml.safe_load("groups: {web: {hosts: [web1], labels: {instance: x}, every: 5s}}")
            errors = list(validator.iter_errors(bad))
            assert len(errors) == 2, errors
            print("valid")
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c", script, Repository.root.appendingPathComponent("docs/fleet.schema.json").path,
            Repository.root.appendingPathComponent("docs/fleet.example.yaml").path,
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("valid"))
    }

    @Test("Labels: the host's win over the group's, the group's over the defaults'")
    func labelsLayer() throws {
        let file = try parse(
            """
            defaults: {labels: {env: dev, dc: a}}
            groups:
              g:
                labels: {env: prod}
                hosts: [{host: h1, labels: {env: canary}}, h2]
            """)
        #expect(file.entries.map(\.labels) == [["env": "canary", "dc": "a"], ["env": "prod", "dc": "a"]])
    }

    @Test("YAML that does not parse names the file and the line")
    func yamlError() {
        let message = problem("groups:\n  web:\n    hosts: [web1\n  labels: x\n")
        #expect(
            message.hasPrefix("the fleet file /etc/hostscope/fleet.yaml, line 4: it is not valid YAML"), "\(message)")
    }

    @Test("An unknown key names the keys allowed there")
    func unknownKey() {
        let message = problem("groups:\n  web:\n    hosts: [web1]\n    every: 5s\n")
        #expect(
            message
                == "the fleet file /etc/hostscope/fleet.yaml, line 4: \"every\" is not a key of the group web; the "
                + "keys allowed there are hosts, labels, interval, timeout, top, collector, textfile_directory")
        #expect(
            problem("group: {}\n").contains(
                "line 1: \"group\" is not a key of the file; the keys allowed there are defaults, groups, serve"))
        #expect(
            problem("groups: {a: {hosts: [a]}}\nserve: {token: x}\n").contains(
                "line 2: \"token\" is not a key of serve:"))
    }

    @Test("A bad duration says how to write one")
    func badDuration() {
        let message = problem("groups:\n  web:\n    hosts: [web1]\n    interval: 5 minutes\n")
        #expect(
            message.hasPrefix(
                "the fleet file /etc/hostscope/fleet.yaml, line 4: interval: \"5 minutes\" is not a duration; a duration is"
            ), "\(message)")
        #expect(problem("groups: {a: {hosts: [a], interval: 10ms}}").contains("line 1: interval: 10ms is too short"))
    }

    @Test("A label name Prometheus would refuse, or one hostscope sets, is refused")
    func badLabelNames() {
        #expect(
            problem("groups:\n  a:\n    hosts: [a]\n    labels: {1env: x}\n").contains(
                "line 4: the label name \"1env\" cannot be used: a label name is letters"))
        #expect(
            problem("groups:\n  a:\n    hosts: [a]\n    labels:\n      __meta: x\n").contains(
                "line 5: the label name \"__meta\" cannot be used: names starting with __"))
        #expect(
            problem("groups: {a: {hosts: [{host: a, labels: {instance: b}}]}}").contains(
                "the label name \"instance\" cannot be used: hostscope sets instance itself"))
        #expect(problem("groups: {a: {hosts: [a], labels: {env-x: b}}}").contains("\"env-x\""))
    }

    @Test("A host in two groups with different labels names both lines")
    func conflictingGroups() {
        let message = problem(
            """
            groups:
              web:
                hosts: [web1]
                labels: {env: prod}
              canary:
                hosts: [web1]
                labels: {env: canary}
            """)
        #expect(
            message
                == "the fleet file /etc/hostscope/fleet.yaml, line 6: web1 is also in the group web (line 3) with "
                + "env=prod there and env=canary here; give it the same there, or list it in one group only")
        // The same labels in both: one host, read once.
        #expect(
            (try? parse("groups:\n  a: {hosts: [web1], labels: {env: p}}\n  b: {hosts: [web1], labels: {env: p}}\n"))
                != nil)
    }

    @Test("Files that say nothing useful are refused with what to add")
    func emptyFiles() {
        #expect(problem("").contains("it is empty"))
        #expect(problem("serve: {listen: '127.0.0.1:9464'}").contains("it has no groups: section"))
        #expect(problem("groups: {web: {labels: {a: b}}}").contains("line 1: the group web has no hosts:"))
        #expect(problem("groups: {web: {hosts: []}}").contains("must be a list of hosts"))
        #expect(problem("groups: {web: {hosts: ['web1 web2']}}").contains("is not one host or pattern"))
        #expect(problem("groups: {a: {hosts: [a], top: many}}").contains("top: many is not a number"))
        #expect(
            problem("groups: {a: {hosts: [a], collector: snmp}}").contains(
                "collector: snmp is not one of auto, proc, tools"))
        #expect(
            problem("groups: {a: {hosts: [a]}}\nserve: {tls_cert: c}").contains("tls_cert: and tls_key: go together"))
        #expect(problem("groups: {a: {hosts: [a]}}\nserve: {alertmanager: [am:9093]}").contains("is not an http://"))
        #expect(problem("groups: {a: {hosts: [a]}}\nserve: {files_root: logs}").contains("is not an absolute path"))
        #expect(problem("groups: {a: {hosts: [a]}, a: {hosts: [b]}}").contains("the key a is given twice"))
    }
}
