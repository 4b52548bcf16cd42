import Foundation
import HostscopeCore
import HostscopeServer
import Logging
import Synchronization
import Testing
import ValueFormats

@Suite struct ServeFaceTests {
    @Test(arguments: [
        ("127.0.0.1:9464", "127.0.0.1", 9464, true), ("[::1]:80", "::1", 80, true),
        ("localhost:1", "localhost", 1, true),
        ("0.0.0.0:9464", "0.0.0.0", 9464, false), (":9464", "0.0.0.0", 9464, false),
        ("192.0.2.7:9100", "192.0.2.7", 9100, false), ("127.1.2.3:0", "127.1.2.3", 0, true),
    ])
    func listenAddressesAreReadAndLoopbackIsKnown(text: String, host: String, port: Int, loopback: Bool) throws {
        let address = try #require(ListenAddress(text))
        #expect(address.host == host)
        #expect(address.port == port)
        #expect(address.isLoopback == loopback)
    }

    @Test(arguments: ["9464", "host:", "host:99999", "[::1]9464", "a b:1", "127.0.0.1:-1"])
    func malformedListenAddressesAreRefused(text: String) {
        #expect(ListenAddress(text) == nil)
    }

    @Test func aListenNameIsJudgedByTheAddressItResolvesToNotByHowItReads() throws {
        // It reads like 127.0.0.0/8, four parts and all, but it is a name.
        let tricky = try #require(ListenAddress("127.lan.example.internal:9464"))
        #expect(!tricky.isLoopback)
        #expect(!tricky.isNumeric)
        let wildcard = try #require(tricky.resolved(using: { _ in ["0.0.0.0"] }))
        #expect(wildcard == ListenAddress(host: "0.0.0.0", port: 9464))
        #expect(!wildcard.isLoopback)
        // The first address is the one bound, and the one judged.
        let first = try #require(ListenAddress("monitor:1")?.resolved(using: { _ in ["127.0.1.1", "10.0.0.5"] }))
        #expect(first.host == "127.0.1.1")
        #expect(first.isLoopback)
        #expect(ListenAddress("nowhere.invalid:1")?.resolved(using: { _ in [] }) == nil)
        // An address is not resolved at all.
        let numeric = try #require(ListenAddress("[::1]:9464")?.resolved(using: { _ in ["10.0.0.5"] }))
        #expect(numeric.host == "::1")
        #expect(ListenAddress("localhost:9464")?.resolved()?.isLoopback == true)
    }

    @Test func logLinesAreJSONWithTheirMetadataAndNoRegisteredSecret() throws {
        let secret = "serve-token-\(UUID().uuidString)"
        ProcessSecrets.register(secret)
        let lines = Lock<[String]>([])
        var handler = JSONLogHandler(label: "test", write: { line in lines.withLock { $0.append(line) } })
        handler.logLevel = .info
        let logger = Logger(label: "test", factory: { _ in handler })
        logger.info("token is \(secret)", metadata: ["client": "127.0.0.1", "header": "Bearer \(secret)"])
        logger.debug("not shown at info")
        let written = lines.withLock { $0 }
        #expect(written.count == 1)
        let line = try #require(written.first)
        #expect(!line.contains(secret))
        #expect(line.hasSuffix("\n"))
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        #expect(object?["level"] as? String == "info")
        #expect(object?["client"] as? String == "127.0.0.1")
        #expect((object?["message"] as? String)?.hasPrefix("token is ") == true)
    }
}
