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

    @Test func aFailureIsAnErrorResultWithItsSentence() throws {
        let (result, text) = MCPSession.result(.failure("web9 is not a host this server may reach"), maxBytes: 1024)
        let parsed = try JSONParser.parse(bytes: result)
        #expect(parsed["isError"] == true)
        #expect(parsed["content"]?[0]?["text"] == .string(text))
        #expect(text == "web9 is not a host this server may reach")
    }
}
