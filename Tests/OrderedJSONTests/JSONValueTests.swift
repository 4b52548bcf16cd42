import OrderedJSON
import Testing

@Suite struct JSONWriterTests {
    @Test func objectsKeepTheirKeyOrder() {
        let value: JSONValue = .object(["zeta": 1, "alpha": nil, "mid": 0.5])
        #expect(value.jsonString == #"{"zeta":1,"alpha":null,"mid":0.5}"#)
    }

    @Test func wholeDoublesKeepAFractionAndIntegersDoNot() {
        #expect(JSONValue.double(100).jsonString == "100.0")
        #expect(JSONValue.int(100).jsonString == "100")
        #expect(JSONValue.int(.min).jsonString == "-9223372036854775808")
        #expect(JSONValue.uint(.max).jsonString == "18446744073709551615")
        #expect(JSONValue.double(.nan).jsonString == "null")
    }

    @Test func stringsEscapeControlCharactersAndLineSeparators() {
        let text = "a\"b\\c\nd\u{01}e\u{2028}f✓"
        #expect(JSONValue.string(text).jsonString == #""a\"b\\c\nd\u0001e\u2028f✓""#)
    }

    @Test func stringsEscapeDeleteC1ControlsAndBidirectionalOverrides() throws {
        // What a terminal could act on (CSI as U+009B, OSC as U+009D) or reorder, from text a host chose.
        let text = "a\u{7F}b\u{9B}2Jc\u{9D}0;t\u{9C}d\u{202E}e\u{2066}f\u{2069}gé°µ\u{A0}–"
        let written = JSONValue.string(text).jsonString
        #expect(written == #""a\u007fb\u009b2Jc\u009d0;t\u009cd\u202ee\u2066f\u2069gé°µ\#u{A0}–""#)
        #expect(try JSONParser.parse(written) == .string(text))
    }

    @Test func prettyOutputIndentsByTwoSpaces() {
        let value: JSONValue = .object(["a": [1, 2], "b": .object([:])])
        #expect(value.prettyJSONString == "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {}\n}")
    }
}

@Suite struct JSONParserTests {
    @Test func parsesWhatTheWriterWrites() throws {
        let value: JSONValue = .object([
            "s": "x\ny\u{2028}\"", "i": -42, "u": .uint(.max), "d": 1.25, "b": true, "n": nil,
            "a": [1, "two", .object(["k": false])],
        ])
        #expect(try JSONParser.parse(value.jsonString) == value)
        #expect(try JSONParser.parse(value.prettyJSONString) == value)
    }

    @Test func decodesSurrogatePairs() throws {
        #expect(try JSONParser.parse(#""\ud83d\ude80""#) == .string("🚀"))
    }

    @Test(arguments: ["", "{", "[1,]", "{\"a\" 1}", "01", "1.", "\"abc", "tru", "[1] x", "\"a\tb\""])
    func rejectsMalformedText(_ text: String) {
        #expect(throws: JSONParseError.self) { try JSONParser.parse(text) }
    }
}
