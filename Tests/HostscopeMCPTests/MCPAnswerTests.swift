import Foundation
import OrderedJSON
import Testing

@testable import HostscopeMCP

/// A tool's answer as the client reads it: one JSON-RPC object whose structured content and text copy are the same
/// JSON, whatever the strings in it hold.
struct MCPAnswerTests {
    @Test func aStructuredResultCarriesTheSameJSONAsStructuredContentAndAsItsText() throws {
        let object: JSONObject = [
            "host": "web1", "snapshot": .object(["command": "sh -c \"echo a\\\\b\"\n\tnext \u{2028} é ✓ \u{1F600}"]),
            "exit_code": .int(0), "truncated": false,
        ]
        let (result, text) = MCPSession.result(.structured(object), maxBytes: 48 * 1024)
        let answer = MCPSession.answer(id: .string("call-1"), result: result)
        let parsed = try JSONParser.parse(bytes: Array(answer))
        #expect(parsed["jsonrpc"] == "2.0")
        #expect(parsed["id"] == "call-1")
        #expect(parsed["result"]?["isError"] == false)
        #expect(parsed["result"]?["structuredContent"] == .object(object))
        #expect(parsed["result"]?["content"]?[0]?["type"] == "text")
        #expect(parsed["result"]?["content"]?[0]?["text"] == .string(text))
        #expect(text == JSONValue.object(object).jsonString)
        // Byte for byte what the tree would give, written whole.
        let whole = JSONValue.object([
            "content": .array([.object(["type": "text", "text": .string(text)])]),
            "structuredContent": .object(object), "isError": false,
        ])
        #expect(String(decoding: result, as: UTF8.self) == whole.jsonString)
        #expect(
            String(decoding: answer, as: UTF8.self)
                == "{\"jsonrpc\":\"2.0\",\"id\":\"call-1\",\"result\":\(whole.jsonString)}")
    }

    @Test func aResultAlreadyWrittenAsJSONIsAnsweredByteForByteAsTheSameObjectWrittenWhole() throws {
        let object: JSONObject = [
            "host": "web1", "snapshot": .object(["command": "sh -c \"echo a\\\\b\"\n\tnext é"]), "exit_code": .null,
            "truncated": false,
        ]
        var json: [UInt8] = []
        JSONWriter().write(.object(object), into: &json)
        let spliced = MCPSession.result(.json(json), maxBytes: 48 * 1024)
        let whole = MCPSession.result(.structured(object), maxBytes: 48 * 1024)
        #expect(spliced.result == whole.result)
        #expect(spliced.text == whole.text)
    }

    @Test func aFailureIsAnErrorResultWithItsSentence() throws {
        let (result, text) = MCPSession.result(.failure("web9 is not a host this server may reach"), maxBytes: 1024)
        let parsed = try JSONParser.parse(bytes: result)
        #expect(parsed["isError"] == true)
        #expect(parsed["content"]?[0]?["text"] == .string(text))
        #expect(text == "web9 is not a host this server may reach")
    }
}

/// `host_snapshot` results held to the results' bound, as every other tool's.
struct SnapshotBoundTests {
    static func result(processes: Int, commandBytes: Int) -> JSONObject {
        let process: (Int) -> JSONValue = { pid in
            .object([
                "pid": .int(Int64(pid)), "user": "root", "cpu_percent": .double(99.5),
                "command": .string("cc -c file\(pid).c " + String(repeating: "-Dx ", count: commandBytes / 4)),
            ])
        }
        let snapshot: JSONObject = [
            "schema": "hostscope.snapshot/1", "host": "web1",
            "disks": .array([.object(["mount": "/", "used_percent": .double(40)])]),
            "processes": .array((1...processes).map(process)),
        ]
        return ["host": "web1", "snapshot": .object(snapshot), "exit_code": .null, "truncated": false]
    }

    @Test func aSnapshotWithinTheBoundIsUntouched() {
        let small = Self.result(processes: 10, commandBytes: 100)
        #expect(SnapshotBound.bounded(small, maxBytes: 48 * 1024) == small)
    }

    @Test func theJSONOfAResultWithinTheBoundIsTheResultWrittenOnce() throws {
        let small = Self.result(processes: 10, commandBytes: 100)
        let json = SnapshotBound.json(small, maxBytes: 48 * 1024)
        #expect(String(decoding: json, as: UTF8.self) == JSONValue.object(small).jsonString)
    }

    @Test func theJSONOfAResultOverTheBoundIsTheBoundedResult() throws {
        let large = Self.result(processes: 2000, commandBytes: 200)
        let json = SnapshotBound.json(large, maxBytes: 48 * 1024)
        #expect(json.count <= 48 * 1024)
        #expect(
            String(decoding: json, as: UTF8.self)
                == JSONValue.object(SnapshotBound.bounded(large, maxBytes: 48 * 1024)).jsonString)
        #expect(try JSONParser.parse(bytes: json)["truncated"] == true)
    }

    @Test func longCommandLinesAreCutFirstAndEveryProcessKept() throws {
        // Ten compilers of 30 KB each: 300 KB, as a busy build host gives.
        let bounded = SnapshotBound.bounded(Self.result(processes: 10, commandBytes: 30_000), maxBytes: 48 * 1024)
        #expect(JSONValue.object(bounded).jsonString.utf8.count <= 48 * 1024)
        #expect(bounded["truncated"] == true)
        #expect(bounded["note"]?.stringValue?.hasPrefix("truncated: ask for less with top_processes") == true)
        let processes = try #require(bounded["snapshot"]?["processes"]?.arrayValue)
        #expect(processes.count == 10)
        #expect(
            processes.allSatisfy { ($0["command"]?.stringValue?.utf8.count ?? .max) <= SnapshotBound.commandBytes + 3 })
        #expect(processes.first?["command"]?.stringValue?.hasPrefix("cc -c file1.c -Dx") == true)
        #expect(bounded["snapshot"]?["disks"]?.arrayValue?.count == 1)
    }

    @Test func manyProcessesLoseTheLastOnesUntilTheResultFits() throws {
        let bounded = SnapshotBound.bounded(Self.result(processes: 2000, commandBytes: 200), maxBytes: 48 * 1024)
        #expect(JSONValue.object(bounded).jsonString.utf8.count <= 48 * 1024)
        #expect(bounded["truncated"] == true)
        let processes = try #require(bounded["snapshot"]?["processes"]?.arrayValue)
        #expect(processes.count > 10 && processes.count < 2000)
        // The busiest first, as the snapshot lists them: those are kept.
        #expect(processes.first?["pid"] == 1)
    }
}
