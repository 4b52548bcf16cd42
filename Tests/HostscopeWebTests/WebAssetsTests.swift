import Foundation
import Gzip
import HostscopeWeb
import TestSupport
import Testing

/// The dashboard's files as compiled in, and the answers made of them: every file the page names is there,
/// nothing inline or from elsewhere, no script writes markup, and caching by ETag and gzip are right.
struct WebAssetsTests {
    static let directory = Repository.root.appendingPathComponent("Sources/HostscopeWeb/Assets")

    static func text(_ asset: WebAsset) -> String { String(decoding: asset.bytes, as: UTF8.self) }

    static func matches(_ pattern: String, in text: String) -> [String] {
        let expression = try! NSRegularExpression(pattern: pattern)
        return expression.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap {
            Range($0.range(at: 1), in: text).map { String(text[$0]) }
        }
    }

    @Test func everyAssetThePageOrAScriptNamesIsCompiledIn() throws {
        var named = Self.matches(#"(?:href|src)="/assets/([^"]+)""#, in: Self.text(WebAssets.page))
        for asset in WebAssets.assets.values where asset.name.hasSuffix(".js") {
            named += Self.matches(#"from '\./([^']+)'"#, in: Self.text(asset))
        }
        #expect(named.contains("app.js") && named.contains("app.css") && named.contains("fleet.js"))
        for name in named {
            #expect(WebAssets.assets[name] != nil, "\(name) is named but not compiled in")
        }
    }

    @Test func everyFileOfTheAssetsFolderIsServedAsWritten() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.directory.path).sorted()
        #expect(names.count == WebAssets.assets.count + 1)
        for name in names {
            let bytes = try [UInt8](Data(contentsOf: Self.directory.appendingPathComponent(name)))
            let asset = name == "index.html" ? WebAssets.page : WebAssets.assets[name]
            #expect(asset?.bytes == bytes, "\(name) is not served as the file in Sources/HostscopeWeb/Assets")
        }
    }

    @Test func thePageHasNoInlineScriptStyleOrHandler() {
        let page = Self.text(WebAssets.page)
        #expect(Self.matches(#"(<script(?![^>]*\bsrc=)[^>]*>)"#, in: page).isEmpty)
        #expect(!page.contains("<style"))
        #expect(Self.matches(#"(\sstyle=)"#, in: page).isEmpty)
        #expect(Self.matches(#"(\son[a-z]+=)"#, in: page).isEmpty)
    }

    @Test func noScriptWritesMarkupOrLoadsFromElsewhere() {
        let sinks = [
            "innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function",
            "setAttribute('on", "srcdoc", "http://", "https://", "localStorage.setItem('hostscope.token",
        ]
        for asset in WebAssets.assets.values where asset.name.hasSuffix(".js") || asset.name.hasSuffix(".css") {
            let text = Self.text(asset)
            for sink in sinks {
                #expect(!text.contains(sink), "\(asset.name) uses \(sink)")
            }
        }
    }

    @Test func thePolicyAllowsOnlyTheServersOwnFilesAndNoFraming() {
        let policy = WebAssets.contentSecurityPolicy
        #expect(policy.contains("script-src 'self'") && policy.contains("style-src 'self'"))
        #expect(policy.contains("frame-ancestors 'none'") && policy.contains("require-trusted-types-for 'script'"))
        #expect(!policy.contains("unsafe") && !policy.contains("http"))
    }

    @Test func anAssetIsSentWithItsTypeTagAndPolicyAndGzipOnlyWhenAsked() throws {
        let asset = try #require(WebAssets.assets["fleet.js"])
        let plain = WebAssets.answer(asset, ifNoneMatch: nil, acceptsGzip: false)
        #expect(plain.status == 200 && plain.body == asset.bytes)
        #expect(plain.header("content-type") == "text/javascript; charset=utf-8")
        #expect(plain.header("x-content-type-options") == "nosniff")
        #expect(plain.header("content-security-policy") == WebAssets.contentSecurityPolicy)
        #expect(plain.header("etag") == asset.etag && plain.header("content-encoding") == nil)
        let compressed = WebAssets.answer(asset, ifNoneMatch: nil, acceptsGzip: true)
        #expect(compressed.header("content-encoding") == "gzip")
        #expect(try Gzip.decompress(compressed.body) == asset.bytes)
        #expect(compressed.body.count < asset.bytes.count)
    }

    @Test func aTagTheClientHoldsGivesNotModifiedAndAnotherTheBody() throws {
        let asset = try #require(WebAssets.assets["app.css"])
        let kept = WebAssets.answer(asset, ifNoneMatch: "\"0000\", W/" + asset.etag, acceptsGzip: true)
        #expect(kept.status == 304 && kept.body.isEmpty && kept.header("etag") == asset.etag)
        #expect(WebAssets.answer(asset, ifNoneMatch: "*", acceptsGzip: false).status == 304)
        let changed = WebAssets.answer(asset, ifNoneMatch: "\"0000\"", acceptsGzip: false)
        #expect(changed.status == 200 && changed.body == asset.bytes)
        #expect(WebAssets.assets.values.map(\.etag).count == Set(WebAssets.assets.values.map(\.etag)).count)
    }

    /// The scripts' pure parts (figures, the fleet's aggregates, the event stream's reader) under Node's test
    /// runner: `Tests/WebScripts/*.test.mjs`.
    @Test func theScriptsHelpersPassTheirNodeTests() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["node", "--test", Repository.root.appendingPathComponent("Tests/WebScripts").path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(output)")
        // Every test of every file ran and passed, however many the files hold.
        let written = try FileManager.default.contentsOfDirectory(
            atPath: Repository.root.appendingPathComponent(
                "Tests/WebScripts"
            ).path
        ).filter { $0.hasSuffix(".test.mjs") }.map { name in
            try String(contentsOf: Repository.root.appendingPathComponent("Tests/WebScripts/" + name), encoding: .utf8)
                .components(separatedBy: "\ntest(").count - 1
        }.reduce(0, +)
        #expect(output.contains("# pass \(written)\n") && output.contains("# fail 0"), "\(output)")
    }

    @Test func onlyKnownExtensionsHaveAType() {
        #expect(WebAssets.contentType(of: "a.js") == "text/javascript; charset=utf-8")
        #expect(WebAssets.contentType(of: "a.svg") == "image/svg+xml")
        #expect(WebAssets.contentType(of: "a.map") == nil)
        #expect(WebAssets.contentType(of: "README") == nil)
    }
}
