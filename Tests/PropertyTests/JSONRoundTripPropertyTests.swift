import OrderedJSON
import PropertyBased
import Testing

/// Any Unicode scalar from `lowest` up, surrogates excepted (no scalar has their values); the library's own
/// scalar generator traps on them.
func anyScalar(from lowest: UInt32 = 0) -> Generator<Unicode.Scalar, Shrink.Integer<UInt32>> {
    Gen<UInt32>.value(in: lowest...(0x10FFFF - 0x800)).map { Unicode.Scalar($0 < 0xD800 ? $0 : $0 + 0x800)! }
}

/// Text of any Unicode scalars, control characters, quotes, backslashes and astral characters included.
let anyText = anyScalar().array(of: 0...12).map { scalars in String(String.UnicodeScalarView(scalars)) }

/// A JSON tree built from a list of choices: each number picks the next node (a leaf of any kind, or an
/// array or object holding the nodes built after it), so a shorter list shrinks to a smaller tree.
func jsonTree(_ choices: [UInt64], _ texts: [String]) -> JSONValue {
    var position = 0
    var textIndex = 0
    func nextText() -> String {
        defer { textIndex += 1 }
        return texts.isEmpty ? "" : texts[textIndex % texts.count]
    }
    func node(depth: Int) -> JSONValue {
        guard position < choices.count else { return .null }
        let choice = choices[position]
        position += 1
        switch choice % 10 {
        case 0: return .null
        case 1: return .bool(choice & 0x100 != 0)
        case 2: return .int(Int64(bitPattern: choice))
        // Above Int64.max a reader needs the unsigned case; below it the same figure reads as .int.
        case 3: return .uint(choice | (1 << 63))
        case 4:
            let value = Double(bitPattern: choice)
            return .double(value.isFinite ? value : Double(choice >> 11))
        case 5: return .double(Double(Int64(bitPattern: choice) >> 20) / 1024)
        case 6, 7: return .string(nextText())
        case 8 where depth < 6:
            return .array((0..<Int(choice >> 60)).map { _ in node(depth: depth + 1) })
        case 9 where depth < 6:
            var object = JSONObject()
            // hostscope writes each key once; a reader keeps one of repeated keys, as RFC 8259 allows.
            for _ in 0..<Int(choice >> 60) {
                let key = nextText()
                let value = node(depth: depth + 1)
                if object[key] == nil { object.append(key, value) }
            }
            return .object(object)
        default: return .string(nextText())
        }
    }
    return node(depth: 0)
}

@Suite struct JSONRoundTripPropertyTests {
    @Test func writingThenParsingAnyValueGivesTheSameValueBack() async {
        await propertyCheck(count: 500, input: Gen.uint64().array(of: 0...60), anyText.array(of: 0...6)) {
            choices, texts in
            let value = jsonTree(choices, texts)
            for writer in [JSONWriter(), JSONWriter(pretty: true)] {
                let text = writer.string(value)
                #expect(throws: Never.self) {
                    let parsed = try JSONParser.parse(text)
                    #expect(parsed == value, "\(text)")
                }
                #expect((try? JSONParser.parse(bytes: Array(text.utf8))) == value)
            }
        }
    }

    @Test func anyStringSurvivesEscapingExactly() async {
        await propertyCheck(count: 1000, input: anyText) { text in
            var bytes: [UInt8] = []
            JSONWriter.appendString(text, into: &bytes)
            #expect(!bytes.contains { $0 < 0x20 }, "control characters are escaped")
            #expect((try? JSONParser.parse(bytes: bytes)) == .string(text))
        }
    }
}
