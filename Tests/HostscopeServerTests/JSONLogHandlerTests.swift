import HostscopeServer
import Logging
import OrderedJSON
import Synchronization
import Testing

@Suite struct JSONLogHandlerTests {
    @Test func figuresAndFlagsGivenAsValuesAreJSONNumbersAndBooleans() throws {
        let written = Mutex<[String]>([])
        let handler = JSONLogHandler(label: "test") { line in written.withLock { $0.append(line) } }
        let logger = Logger(label: "test") { _ in handler }
        logger.info(
            "request",
            metadata: [
                "duration_ms": .stringConvertible(0.07), "status": .stringConvertible(503),
                "auth": .stringConvertible(false), "path": "/readyz", "words": .stringConvertible("12"),
            ])
        let line = try #require(written.withLock { $0.first })
        let object = try JSONParser.parse(line)
        #expect(object["duration_ms"] == .double(0.07), "\(line)")
        #expect(object["status"]?.intValue == 503 && object["status"]?.stringValue == nil, "\(line)")
        #expect(object["auth"] == .bool(false), "\(line)")
        #expect(object["path"] == "/readyz")
        // Text stays text, even when it reads as a number.
        #expect(object["words"] == "12")
        #expect(line.contains("\"duration_ms\":0.07"), "\(line)")
    }
}
