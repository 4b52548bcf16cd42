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
        while let last = bytes.last, isBlank(last) || last == ASCIIByte.formFeed {
            bytes.removeLast()
        }
        var index = 0
        skip(blanksIn: bytes, from: &index)
        let keywordStart = index
        while index < bytes.count, !isBlank(bytes[index]), bytes[index] != ASCIIByte.equals {
            index += 1
        }
        let keywordBytes = bytes[keywordStart..<index]
        if keywordBytes.isEmpty || keywordBytes.first == ASCIIByte.hash {
            return nil
        }
        // Only one `=` separates the keyword from its value; a second one belongs to the value.
        skip(blanksIn: bytes, from: &index)
        if index < bytes.count, bytes[index] == ASCIIByte.equals {
            index += 1
            skip(blanksIn: bytes, from: &index)
        }
        let spelling = String(decoding: keywordBytes, as: UTF8.self)
        guard index < bytes.count else {
            throw .config(location, "\"\(spelling)\" has no value; write it as \"\(spelling) VALUE\"")
        }
        let arguments = try splitArguments(bytes[index...], location: location)
        return SSHConfigDirective(
            keyword: spelling, spelling: spelling, arguments: arguments, location: location,
            rawValue: String(decoding: bytes[index...], as: UTF8.self))
    }

    /// OpenSSH's `argv_split` with comments ending the line.
    static func splitArguments(_ bytes: ArraySlice<UInt8>, location: SSHConfigLocation) throws(SSHError) -> [String] {
        var arguments: [String] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == ASCIIByte.space || bytes[index] == ASCIIByte.tab {
                index += 1
                continue
            }
            if bytes[index] == ASCIIByte.hash {
                break
            }
            var argument: [UInt8] = []
            var quote: UInt8? = nil
            while index < bytes.endIndex {
                let byte = bytes[index]
                if byte == ASCIIByte.backslash, index + 1 < bytes.endIndex {
                    let next = bytes[index + 1]
                    if next == ASCIIByte.singleQuote || next == ASCIIByte.doubleQuote || next == ASCIIByte.backslash
                        || (quote == nil && next == ASCIIByte.space)
                    {
                        argument.append(next)
                        index += 2
                        continue
                    }
                    argument.append(byte)
                } else if quote == nil, byte == ASCIIByte.space || byte == ASCIIByte.tab {
                    break
                } else if quote == nil, byte == ASCIIByte.doubleQuote || byte == ASCIIByte.singleQuote {
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

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == ASCIIByte.space || byte == ASCIIByte.tab || byte == ASCIIByte.cr || byte == ASCIIByte.lf
    }

    private static func skip(blanksIn bytes: [UInt8], from index: inout Int) {
        while index < bytes.count, isBlank(bytes[index]) {
            index += 1
        }
    }
}
