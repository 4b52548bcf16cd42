import Chat
import Foundation
import TestSupport
import Testing

@Suite("SSEParser")
struct SSEParserTests {
    private func parse(_ text: String) -> [ServerSentEvent] {
        var parser = SSEParser()
        return parser.parse(Array(text.utf8))
    }

    private func parse(chunks: [[UInt8]]) -> (events: [ServerSentEvent], incomplete: Bool) {
        var parser = SSEParser()
        var events: [ServerSentEvent] = []
        for chunk in chunks {
            events += parser.parse(chunk)
        }
        return (events, parser.finish())
    }

    static var fixtureFiles: [URL] {
        let root = Repository.fixtures.appendingPathComponent("llm")
        let files =
            FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "sse" } ?? []
        return files.sorted { $0.path < $1.path }
    }

    @Test("Data lines of one event are joined with line feeds and the last one is not followed by one")
    func multiLineData() {
        let events = parse("data: first\ndata: second\ndata:\ndata: fourth\n\n")
        #expect(events.map(\.data) == ["first\nsecond\n\nfourth"])
        #expect(events.first?.type == "message")
    }

    @Test("Only one space after the colon is dropped, and a field without a colon has an empty value")
    func fieldValues() {
        #expect(parse("data:  two spaces\n\n").map(\.data) == [" two spaces"])
        #expect(parse("data:no space\n\n").map(\.data) == ["no space"])
        #expect(parse("data\n\n").map(\.data) == [""])
        #expect(parse("data: a:b:c\n\n").map(\.data) == ["a:b:c"])
    }

    @Test("The event field sets the type of one event only")
    func eventType() {
        let events = parse("event: message_start\ndata: {}\n\ndata: next\n\nevent:\ndata: empty type\n\n")
        #expect(events.map(\.type) == ["message_start", "message", "message"])
    }

    @Test("An id persists across events until changed, and an id containing NUL is ignored")
    func lastEventID() {
        let events = parse("id: 7\ndata: a\n\ndata: b\n\nid: 8\u{0}x\ndata: c\n\nid\ndata: d\n\n")
        #expect(events.map(\.lastEventID) == ["7", "7", "7", ""])
    }

    @Test("Retry takes digits only")
    func retry() {
        var parser = SSEParser()
        _ = parser.parse(Array("retry: 2500\n\n".utf8))
        #expect(parser.reconnectionTime == 2500)
        _ = parser.parse(Array("retry: 12a\n\nretry: -5\n\nretry:\n\n".utf8))
        #expect(parser.reconnectionTime == 2500)
    }

    @Test("Comments and unknown fields are ignored, and a blank line without data dispatches nothing")
    func commentsAndUnknownFields() {
        var parser = SSEParser()
        let events = parser.parse(Array(": OPENROUTER PROCESSING\n\nfoo: bar\n\n:\nevent: ping\n\ndata: x\n\n".utf8))
        #expect(events.map(\.data) == ["x"])
        #expect(events.first?.type == "message")
        #expect(parser.commentCount == 2)
    }

    @Test("CRLF, LF and CR all end lines, mixed in one stream")
    func lineEndings() {
        let events = parse("data: a\r\ndata: b\rdata: c\n\r\ndata: d\r\r")
        #expect(events.map(\.data) == ["a\nb\nc", "d"])
    }

    @Test("A leading byte order mark is dropped, even split across chunks, but a second one is content")
    func byteOrderMark() {
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        let body = Array("data: x\n\n".utf8)
        #expect(parse(chunks: [bom + body]).events.map(\.data) == ["x"])
        #expect(parse(chunks: [[0xEF], [0xBB], [0xBF] + body]).events.map(\.data) == ["x"])
        // With a second mark the first field name is "\u{FEFF}data", which is not a known field.
        #expect(parse(chunks: [bom + bom + body]).events.isEmpty)
        // Bytes that start like a mark but are not one are kept: here they open an unknown field name.
        #expect(parse(chunks: [[0xEF, 0xBB], Array("data: y\n\ndata: z\n\n".utf8)]).events.map(\.data) == ["z"])
    }

    @Test("An event not closed by a blank line is discarded at the end, and finish says so")
    func incompleteEventAtEnd() {
        let complete = parse(chunks: [Array("data: a\n\n".utf8)])
        #expect(complete.events.map(\.data) == ["a"])
        #expect(complete.incomplete == false)
        let cut = parse(chunks: [Array("data: a\n\ndata: b\n".utf8)])
        #expect(cut.events.map(\.data) == ["a"])
        #expect(cut.incomplete)
        #expect(parse(chunks: [Array("data: a\n\ndata: partial line".utf8)]).incomplete)
    }

    @Test("[DONE] is recognised exactly")
    func doneSentinel() {
        let events = parse("data: [DONE]\n\ndata:  [DONE]\n\ndata: [DONE] \n\n")
        #expect(events.map(\.isDoneSentinel) == [true, false, false])
    }

    @Test("Every recorded stream parses the same when split in two at every byte position")
    func splitAtEveryPosition() throws {
        let files = Self.fixtureFiles
        #expect(files.count >= 30)
        for file in files {
            let bytes = try [UInt8](Data(contentsOf: file))
            let whole = parse(chunks: [bytes])
            #expect(!whole.events.isEmpty, "no events in \(file.lastPathComponent)")
            for cut in 0...bytes.count {
                let split = parse(chunks: [Array(bytes[..<cut]), Array(bytes[cut...])])
                guard split.events == whole.events, split.incomplete == whole.incomplete else {
                    Issue.record("\(file.lastPathComponent) parses differently when cut at byte \(cut)")
                    break
                }
            }
            let byteByByte = parse(chunks: bytes.map { [$0] })
            #expect(byteByByte.events == whole.events, "\(file.lastPathComponent) fed byte by byte")
        }
    }

    @Test(
        "A stream with CRLF pairs and multi-byte characters parses the same cut into three at every pair of positions")
    func splitInThree() {
        let text =
            "\u{FEFF}: hi\r\nevent: delta\r\ndata: café 🚀\r\ndata: 日本\r\n\r\n" + "id: 1\rdata: ok\r\rdata: x\n\n"
        let bytes = Array(text.utf8)
        let whole = parse(chunks: [bytes])
        #expect(whole.events.map(\.data) == ["café 🚀\n日本", "ok", "x"])
        #expect(whole.events.map(\.type) == ["delta", "message", "message"])
        for first in 0...bytes.count {
            for second in first...bytes.count {
                let split = parse(
                    chunks: [Array(bytes[..<first]), Array(bytes[first..<second]), Array(bytes[second...])])
                if split.events != whole.events {
                    Issue.record("cut at \(first) and \(second) gives \(split.events)")
                    return
                }
            }
        }
    }
}
