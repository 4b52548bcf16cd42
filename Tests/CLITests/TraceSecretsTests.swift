import Foundation
import Storage
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A marker secret set through every input path never appears in any output, span, export, receiver
/// log or the database file.
@Suite(.serialized) struct TraceSecretsTests {
    @Test(.enabled(if: getuid() == 0, "a non-root sshd cannot check passwords"))
    func secretsFromEveryInputPathNeverLeave() async throws {
        let server = try SSHTestServer.shared()
        let password = try #require(server.password)
        let passphrase = server.passphrase
        try #require(!passphrase.isEmpty)
        let marker = UUID().uuidString.replacingOccurrences(of: "-", with: "")
        let urlPassword = "UrlPass\(marker)"
        let token = "Tok\(marker)"
        let header = "Hdr\(marker)"
        let secrets = [password, passphrase, urlPassword, token, header]

        let database = NSTemporaryDirectory() + "hostscope-secrets-\(UUID().uuidString).sqlite"
        let received = NSTemporaryDirectory() + "hostscope-secrets-\(UUID().uuidString).jsonl"
        let exported = NSTemporaryDirectory() + "hostscope-secrets-\(UUID().uuidString).otlp.jsonl"
        let home = NSTemporaryDirectory() + "hostscope-secrets-home-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
            for path in [received, exported, home] { try? FileManager.default.removeItem(atPath: path) }
        }
        var outputs: [String] = []
        let environment = ["HS_PW": password, "HS_PASS": passphrase, "HOME": home, "HOSTSCOPE_DB": database]

        try await withPythonServer("otlp_receiver.py", arguments: ["--ndjson", received]) { receiver in
            let endpoint = "http://collector:\(urlPassword)@127.0.0.1:\(receiver.port)/?token=\(token)"
            let otlp = ["--otlp-endpoint", endpoint, "--otlp-header", "Authorization=Bearer \(header)"]
            // Password authentication (no key to offer: HOME is empty and no agent).
            let byPassword = try CLI.run(
                [
                    "snapshot", server.target, "--known-hosts", server.knownHostsPath, "--password-env", "HS_PW", "-o",
                    "json",
                ] + otlp, environment: environment)
            #expect(byPassword.status == 0, "\(byPassword.stderr)")
            // An encrypted key and its passphrase.
            let byPassphrase = try CLI.run(
                [
                    "snapshot", server.target, "--known-hosts", server.knownHostsPath, "-i", server.encryptedKeyPath,
                    "--passphrase-env", "HS_PASS", "-o", "json",
                ] + otlp, environment: environment)
            #expect(byPassphrase.status == 0, "\(byPassphrase.stderr)")
            // A watch tick, exporting continuously as it runs.
            let failing = try CLI.run(
                [
                    "watch", server.target, "--count", "1", "--known-hosts", server.knownHostsPath, "--password-env",
                    "HS_PW", "--format", "ndjson",
                ] + otlp, environment: environment)
            #expect(failing.status == 0, "\(failing.stderr)")
            outputs += [
                byPassword.stdout, byPassword.stderr, byPassphrase.stdout, byPassphrase.stderr, failing.stdout,
                failing.stderr,
            ]

            let flat = try CLI.run(["trace", "export", "--format", "spans"], environment: environment)
            let otlpExport = try CLI.run(
                ["trace", "export", "--format", "otlp", "--output", exported], environment: environment)
            let list = try CLI.run(["trace", "list", "--spans", "--limit", "1000"], environment: environment)
            let traces = try CLI.run(["trace", "list", "--limit", "1000"], environment: environment)
            outputs += [flat.stdout, flat.stderr, otlpExport.stdout, otlpExport.stderr, list.stdout, list.stderr]
            outputs += [traces.stdout, traces.stderr]
            let methods = flat.stdout.split(separator: "\n").compactMap { line -> String? in
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                    return nil
                }
                return (object["attributes"] as? [String: Any])?["hostscope.ssh.auth.method"] as? String
            }
            // Both paths were really exercised.
            #expect(methods.contains("password"))
            #expect(methods.contains { $0.hasPrefix("publickey") })
            for line in list.stdout.split(separator: "\n").dropFirst().dropLast() {
                guard let id = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(2).first else {
                    continue
                }
                let show = try CLI.run(["trace", "show", String(id)], environment: environment)
                outputs += [show.stdout, show.stderr]
            }

            let push = try CLI.run(
                ["trace", "push", "--endpoint", endpoint, "--header", "Authorization=Bearer \(header)"],
                environment: environment)
            #expect(push.status == 0, "\(push.stderr)")
            outputs += [push.stdout, push.stderr]
            let port = receiver.port
            let log = try CLI.runShell("curl -s http://127.0.0.1:\(port)/received")
            outputs.append(log.stdout)
            #expect(
                (try JSONSerialization.jsonObject(with: Data(log.stdout.utf8)) as? [String: Any])?["span_count"]
                    as? Int ?? 0 > 0)
        }
        // A receiver that is down: the error names the endpoint without its credentials.
        let down = try CLI.run(
            [
                "trace", "push", "--endpoint", "http://collector:\(urlPassword)@127.0.0.1:1/?token=\(token)",
                "--header",
                "Authorization=Bearer \(header)", "--timeout", "1s",
            ], environment: environment)
        #expect(down.status == 3)
        #expect(down.stderr.contains("127.0.0.1:1/v1/traces?token=REDACTED"))
        outputs += [down.stdout, down.stderr]

        let files = [database, database + "-wal", received, exported].filter {
            FileManager.default.fileExists(atPath: $0)
        }
        #expect(files.contains(database))
        for path in files {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            for secret in secrets {
                #expect(bytes.range(of: Data(secret.utf8)) == nil, "a secret is in \(path)")
            }
        }
        for (index, text) in outputs.enumerated() {
            for secret in secrets {
                #expect(!text.contains(secret), "output \(index) holds secret \(secrets.firstIndex(of: secret)!)")
            }
        }
        // The database holds the spans, so the file check above looked at real content: their JSON, and the
        // OTLP encodings stored beside it that a push sends as they are.
        let stored = try CLI.run(["trace", "list", "--spans", "--kind", "ssh"], environment: environment)
        #expect(stored.stdout.contains("ssh connect"))
        let opened = try await StorageDatabase.open(at: database, mode: .existingOnly)
        let page = try await opened.spans.otlpPage(limit: 10_000)
        try await opened.close()
        let encoded = page.entries.filter { if case .encoded = $0 { true } else { false } }
        #expect(encoded.count == page.entries.count && !encoded.isEmpty)
        for secret in secrets {
            #expect(page.spanBytes.firstRange(of: Array(secret.utf8)) == nil)
            #expect(page.resources.allSatisfy { $0.firstRange(of: Array(secret.utf8)) == nil })
        }
    }
}
