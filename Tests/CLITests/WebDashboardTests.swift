import Foundation
import OrderedJSON
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Whether the browser tests can run: Chromium, its driver and Selenium (Scripts/setup.sh --tests installs them).
enum BrowserInstallation {
    static let available: Bool = {
        let result = try? CLI.runShell(
            "command -v chromium >/dev/null && command -v chromedriver >/dev/null && python3 -c 'import selenium' 2>/dev/null"
        )
        return result?.status == 0
    }()
}

/// serve's dashboard: the page and its assets as a real `serve` sends them (open without the token, with
/// their policy, tags and gzip, while the API still needs the token), and the page itself in headless
/// Chromium through `Scripts/web_dashboard_check.py` against the harness sshd.
@Suite(.serialized, .timeLimit(.minutes(10))) struct WebDashboardTests {
    let server: SSHTestServer
    let directory: String
    let config: String
    let downFlag: String

    init() throws {
        server = try SSHTestServer.shared()
        directory = NSTemporaryDirectory() + "hostscope-web-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        config = directory + "/ssh_config"
        // evil1 fails through a ProxyCommand that writes markup to its standard error, which its error quotes.
        let evil = """
            Host evil1
                HostName 127.0.0.1
                Port \(server.port)
                User \(server.user)
                ProxyCommand sh -c 'echo "<img src=x onerror=window.hostscopeXSS=1>" >&2; exit 1'

            """
        // down1 connects only while the flag file exists, through a proxy whose pid is in FLAG.pid: the browser
        // test takes it down (the flag removed, the proxy killed) and up again.
        let down = SwitchableHost("down1", flag: directory + "/down1-up")
        downFlag = down.flag
        try (server.configBlock("h1") + server.configBlock("h2") + evil + "\n" + down.configBlock(server)).write(
            toFile: config, atomically: true, encoding: .utf8)
    }

    @Test func thePageAndItsAssetsNeedNoTokenAndGoOutWithTheirPolicyWhileTheAPIStillNeedsIt() throws {
        let tokenPath = directory + "/token"
        let token = "0123456789abcdef0123456789abcdef-web"
        try token.write(toFile: tokenPath, atomically: true, encoding: .utf8)
        chmod(tokenPath, 0o600)
        let serve = try RunningServe(
            ["h1", "--ssh-config", config, "--every", "5s", "--listen", "127.0.0.1:0", "--token-file", tokenPath],
            directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()

        let page = try serve.get("/", headers: ["Accept: text/html,application/xhtml+xml,*/*;q=0.8"])
        #expect(page.status == 200)
        #expect(page.headers["content-type"] == "text/html; charset=utf-8")
        let policy = try #require(page.headers["content-security-policy"])
        #expect(policy.contains("script-src 'self'") && policy.contains("frame-ancestors 'none'"))
        #expect(!policy.contains("unsafe-inline"))
        #expect(page.headers["x-content-type-options"] == "nosniff")
        #expect(page.body.contains("<script type=\"module\" src=\"/assets/app.js\"></script>"))

        // Without asking for HTML, / is the JSON list of endpoints, and needs the token as before.
        #expect(try serve.get("/").status == 401)
        let index = try serve.get("/", headers: ["Authorization: Bearer \(token)"])
        #expect(index.status == 200 && index.body.contains("/api/v1/events"))
        #expect(try serve.get("/api/v1/hosts").status == 401)
        #expect(try serve.get("/api/v1/hosts", headers: ["Accept: text/html"]).status == 401)

        // Every asset the page names, with its type; gzip when asked; 304 for the tag the client holds.
        let named = page.body.components(separatedBy: "/assets/").dropFirst().map { $0.prefix { $0 != "\"" } }
        #expect(named.count >= 3)
        for name in named {
            let asset = try serve.get("/assets/\(name)")
            #expect(asset.status == 200, "/assets/\(name)")
            #expect(asset.headers["content-security-policy"] == policy)
            #expect(asset.headers["cache-control"] == "no-cache")
            let tag = try #require(asset.headers["etag"])
            #expect(try serve.get("/assets/\(name)", headers: ["If-None-Match: \(tag)"]).status == 304)
        }
        let script = try serve.get("/assets/fleet.js", headers: ["Accept-Encoding: gzip"])
        #expect(script.headers["content-encoding"] == "gzip")
        #expect(script.headers["content-type"] == "text/javascript; charset=utf-8")
        let decoded = try CurlCommand.get(serve.url("/assets/fleet.js"), extra: ["--compressed"])
        #expect(decoded.body.contains("export function mount"))

        // An unknown asset is a 404 that is never cached; the Host check holds for the page as for the API.
        let missing = try serve.get("/assets/app.js.map")
        #expect(missing.status == 404 && missing.headers["cache-control"] == "no-store")
        #expect(try serve.get("/assets/", headers: []).status == 404)
        let rebound = try serve.get("/", headers: ["Accept: text/html", "Host: evil.example"])
        #expect(rebound.status == 421)
    }

    /// The page and its assets are answered on the connection's event loop before routing, with the router's checks:
    /// on one kept-alive connection their answers come in order among routed ones, an unknown asset is still the
    /// router's 404, another `Host` its 421, and they spend the client's rate like any request.
    @Test func thePageAndAssetsAnsweredBeforeRoutingKeepTheOrderTheHostCheckAndTheRate() throws {
        let serve = try RunningServe(
            ["h1", "--ssh-config", config, "--every", "5s", "--listen", "127.0.0.1:0", "--rate-limit", "5"],
            directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        func curl(_ paths: [String], _ headers: [String] = ["Accept: text/html"]) throws -> [String] {
            let line =
                ["curl", "-s", "-w", "%{http_code} %{num_connects}\\n"] + headers.flatMap { ["-H", $0] }
                + paths.flatMap { ["-o", "/dev/null", serve.url($0)] }
            let result = try CLI.runShell(line.map(CLI.shellQuoted).joined(separator: " "))
            return result.stdout.split(separator: "\n").map(String.init)
        }
        let ordered = try curl([
            "/assets/app.js", "/healthz", "/", "/assets/nothing.js", "/assets/fleet.js", "/healthz",
        ])
        #expect(ordered == ["200 1", "200 0", "200 0", "404 0", "200 0", "200 0"], "\(ordered)")
        #expect(try curl(["/assets/app.js"], ["Host: evil.example"]) == ["421 1"])
        // --rate-limit 5: bursts of 10, then 429 for the assets as for the API.
        let burst = try curl(Array(repeating: "/assets/app.js", count: 14))
        #expect(burst.contains { $0.hasPrefix("429") }, "\(burst)")
    }

    /// The host list and history pages are megabytes for a large fleet: gzip-compressed for a client that takes
    /// it (every browser), the same JSON once decoded, and as they were for one that does not.
    @Test func theHostListAndHistoryAreGzipCompressedForAClientThatTakesIt() throws {
        let serve = try RunningServe(
            ["h1", "--ssh-config", config, "--every", "1s", "--listen", "127.0.0.1:0"], directory: directory)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        _ = try serve.waitFor("/api/v1/hosts/h1/history?limit=2") { $0.body.contains("\"processes\"") }
        for path in ["/api/v1/hosts", "/api/v1/hosts/h1/history?limit=5"] {
            let plain = try serve.get(path)
            #expect(plain.status == 200 && plain.headers["content-encoding"] == nil, "\(path)")
            let compressed = try serve.get(path, headers: ["Accept-Encoding: gzip"])
            #expect(compressed.headers["content-encoding"] == "gzip", "\(path)")
            #expect(compressed.headers["vary"] == "Accept-Encoding", "\(path)")
            let decoded = try CurlCommand.get(serve.url(path), extra: ["--compressed"])
            let schema = try JSONParser.parse(decoded.body)["schema"]?.stringValue
            #expect(schema?.hasPrefix("hostscope.api.") == true, "\(path): \(decoded.body.prefix(200))")
        }
    }

    /// The assets are in the executable itself: a copy of it alone in an empty directory serves the page and
    /// every asset, byte for byte as the build directory's binary does.
    @Test func aCopiedBinaryAloneInADirectoryServesItsPage() throws {
        let alone = directory + "/alone"
        try FileManager.default.createDirectory(atPath: alone, withIntermediateDirectories: true)
        let copy = ["/bin/sh", "-c", "cp \"$0\" \(alone)/hostscope && cd / && exec \(alone)/hostscope \"$@\""]
        let serve = try RunningServe(
            ["h1", "--ssh-config", config, "--every", "5s", "--listen", "127.0.0.1:0"], directory: directory,
            launcher: copy)
        defer { _ = serve.stop() }
        try serve.waitUntilListening()
        #expect(try FileManager.default.contentsOfDirectory(atPath: alone) == ["hostscope"])
        let page = try serve.get("/", headers: ["Accept: text/html"])
        #expect(page.status == 200 && page.body.contains("/assets/app.js"))
        for name in ["app.js", "app.css", "fleet.js", "host.js", "chart.js", "icon.svg"] {
            let asset = try serve.get("/assets/\(name)")
            let file = try String(
                contentsOf: Repository.root.appendingPathComponent("Sources/HostscopeWeb/Assets/\(name)"),
                encoding: .utf8)
            #expect(asset.status == 200 && asset.body == file, "\(name)")
        }
    }

    /// The Files screen is toured under `--files-root` (a file named `<img src=x onerror=alert(1)>`, content with
    /// `<script>` and ANSI escapes, a grep result opening its line, a live tail, a download).
    /// Screenshots (1400×900 and 390×844 of each screen) and serve's log go to `HOSTSCOPE_TEST_ARTIFACTS/web`
    /// (default `.build/test-artifacts/web`).
    @Test(
        .enabled(
            if: BrowserInstallation.available,
            "chromium, chromium-driver or selenium is missing, so the browser test is skipped: Scripts/setup.sh --tests"
        ))
    func theDashboardListsUpdatesDrawsChatsAndReconnectsInARealBrowser() async throws {
        let script = Repository.root.appendingPathComponent("Scripts/web_dashboard_check.py").path
        let artifacts =
            (ProcessInfo.processInfo.environment["HOSTSCOPE_TEST_ARTIFACTS"]
                ?? Repository.root.appendingPathComponent(".build/test-artifacts").path) + "/web"
        // An alert that fires on every host at once, its summary holding markup.
        let rules = directory + "/rules.yml"
        try """
        rules:
          - alert: WebCheck
            when: cpu_busy_percent >= 0
            severity: critical
            annotations:
              summary: '<img src=x onerror=window.hostscopeXSS=1> on {{ $labels.instance }}'

        """.write(toFile: rules, atomically: true, encoding: .utf8)
        // The Chat screen talks to the mock provider of Scripts/llm_mock_server.py.
        try await withPythonServer("llm_mock_server.py") { mock in
            let line = [
                "python3", script, "--binary", CLI.binary, "--ssh-config", config, "--hosts", "h1,h2", "--hostile-host",
                "evil1", "--down-host", "down1", "--down-flag", downFlag, "--db", directory + "/serve.sqlite",
                "--artifacts", artifacts, "--chat-base-url", mock.baseURL + "/v1", "--files-root", directory + "/files",
                "--rules", rules,
            ].map(CLI.shellQuoted).joined(separator: " ")
            let result = try CLI.runShell("timeout 560 " + line)
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        }
    }
}
