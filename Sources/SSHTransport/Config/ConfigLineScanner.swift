/// Splits one ssh_config line into a keyword and its arguments the way OpenSSH's `readconf.c` does, so a
/// line means here what it means to `ssh`.
///
/// - The keyword ends at a blank or at one `=` (`Port=22`, `Port = 22` and `Port 22` are the same line).
/// - Arguments are split on blanks; `"…"` and `'…'` quote (also mid-word: `a"b c"` is `ab c`); a backslash
///   escapes a quote, a backslash, or (outside quotes) a space; any other backslash stays as written.
/// - `#` starts a comment only where an argument would start, so `Port 22#x` is a bad port, as in `ssh`.
enum ConfigLineScanner {
    /// The directive on `line`, or nil for a blank or comment line.
    static func scan(_ line: Substring, at location: SSHConfigLocation) throws(SSHError) -> SSHConfigDirective? {
        var bytes = Array(line.utf8)
        // OpenSSH strips trailing blanks (and a form feed) before anything else.
        while let last = bytes.last, isBlank(last) || last == Byte.formFeed {
            bytes.removeLast()
        }
        var index = 0
        skip(blanksIn: bytes, from: &index)
        let keywordStart = index
        while index < bytes.count, !isBlank(bytes[index]), bytes[index] != Byte.equals {
            index += 1
        }
        let keywordBytes = bytes[keywordStart..<index]
        if keywordBytes.isEmpty || keywordBytes.first == Byte.hash {
            return nil
        }
        // Only one `=` separates the keyword from its value; a second one belongs to the value.
        skip(blanksIn: bytes, from: &index)
        if index < bytes.count, bytes[index] == Byte.equals {
            index += 1
            skip(blanksIn: bytes, from: &index)
        }
        let spelling = String(decoding: keywordBytes, as: UTF8.self)
        guard index < bytes.count else {
            throw .config(location, "\"\(spelling)\" has no value; write it as \"\(spelling) VALUE\"")
        }
        let arguments = try splitArguments(bytes[index...], location: location)
        return SSHConfigDirective(keyword: spelling, spelling: spelling, arguments: arguments, location: location)
    }

    /// OpenSSH's `argv_split` with comments ending the line.
    static func splitArguments(_ bytes: ArraySlice<UInt8>, location: SSHConfigLocation) throws(SSHError) -> [String] {
        var arguments: [String] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == Byte.space || bytes[index] == Byte.tab {
                index += 1
                continue
            }
            if bytes[index] == Byte.hash {
                break
            }
            var argument: [UInt8] = []
            var quote: UInt8? = nil
            while index < bytes.endIndex {
                let byte = bytes[index]
                if byte == Byte.backslash, index + 1 < bytes.endIndex {
                    let next = bytes[index + 1]
                    if next == Byte.singleQuote || next == Byte.doubleQuote || next == Byte.backslash
                        || (quote == nil && next == Byte.space)
                    {
                        argument.append(next)
                        index += 2
                        continue
                    }
                    argument.append(byte)
                } else if quote == nil, byte == Byte.space || byte == Byte.tab {
                    break
                } else if quote == nil, byte == Byte.doubleQuote || byte == Byte.singleQuote {
                    quote = byte
                } else if let open = quote, byte == open {
                    quote = nil
                } else {
                    argument.append(byte)
                }
                index += 1
            }
            if quote != nil {
                throw .config(location, "a quote is not closed; close it or escape it with a backslash")
            }
            arguments.append(String(decoding: argument, as: UTF8.self))
        }
        return arguments
    }

    /// The bytes that matter to the syntax, all ASCII.
    private enum Byte {
        static let tab: UInt8 = 0x09
        static let lf: UInt8 = 0x0A
        static let formFeed: UInt8 = 0x0C
        static let cr: UInt8 = 0x0D
        static let space: UInt8 = 0x20
        static let doubleQuote: UInt8 = 0x22
        static let hash: UInt8 = 0x23
        static let singleQuote: UInt8 = 0x27
        static let equals: UInt8 = 0x3D
        static let backslash: UInt8 = 0x5C
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == Byte.space || byte == Byte.tab || byte == Byte.cr || byte == Byte.lf
    }

    private static func skip(blanksIn bytes: [UInt8], from index: inout Int) {
        while index < bytes.count, isBlank(bytes[index]) {
            index += 1
        }
    }
}
