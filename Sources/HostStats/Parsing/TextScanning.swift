#if canImport(Glibc)
    import Glibc
#endif

/// Tokenising and number reading shared by the parsers.
///
/// Fields are split on ASCII space and tab only: `Character.isWhitespace` would also split on
/// U+202F and U+00A0, which localized sysstat output uses inside labels (`Moyenne :`).
public enum TextScanning {
    /// The lines of `text`, accepting LF and CRLF, without a trailing empty line.
    public static func lines(_ text: String) -> [Substring] {
        lines(text[...])
    }

    /// The lines of `text`, accepting LF and CRLF, without a trailing empty line.
    ///
    /// Splits on the UTF-8 bytes with `memchr`: splitting on `Character` (grapheme breaking) or
    /// walking `UTF8View` indices was the largest cost of reading a probe's output.
    public static func lines(_ text: Substring) -> [Substring] {
        let utf8 = text.utf8
        let fast = utf8.withContiguousStorageIfAvailable { buffer -> [Substring] in
            var result: [Substring] = []
            forEachLine(in: buffer) { start, end in
                let lower = utf8.index(utf8.startIndex, offsetBy: start)
                let upper = utf8.index(lower, offsetBy: end - start)
                result.append(Substring(utf8[lower..<upper]))
            }
            return result
        }
        if let fast { return fast }
        var copy = String(text)
        copy.makeContiguousUTF8()
        return lines(copy[...]).map { Substring($0) }
    }

    /// Calls `body` with the byte offsets of each line (without its LF or CRLF), skipping the
    /// empty line after a final newline.
    @inline(__always)
    static func forEachLine(in buffer: UnsafeBufferPointer<UInt8>, _ body: (Int, Int) -> Void) {
        guard let base = buffer.baseAddress else { return }
        let count = buffer.count
        var start = 0
        while start < count {
            let found = memchr(base + start, 0x0A, count - start)
            let newline = found.map { UnsafeRawPointer($0) - UnsafeRawPointer(base) } ?? count
            var end = newline
            if end > start, base[end - 1] == 0x0D { end -= 1 }
            body(start, end)
            start = newline + 1
        }
    }

    /// Calls `body` with the UTF-8 bytes of `text`, copying them only when `text` is not stored
    /// contiguously (a bridged string); parsers of the kernel's counter files read bytes.
    static func withUTF8<Result>(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = text
        return copy.withUTF8(body)
    }

    /// Calls `body` with each line's bytes and 1-based number, stopping at the first error, which
    /// it returns: the shape of every byte-level parser of a kernel file.
    static func forEachLine(
        of bytes: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>, Int) throws(ParseError) -> Void
    ) -> ParseError? {
        var number = 0
        var failure: ParseError?
        forEachLine(in: bytes) { start, end in
            number += 1
            guard failure == nil else { return }
            do throws(ParseError) {
                try body(slice(bytes, start..<end), number)
            } catch {
                failure = error
            }
        }
        return failure
    }

    /// The byte ranges of the fields of `line` (runs of anything but ASCII space and tab), written
    /// into `ranges`, which is emptied first: one array serves every line of a file.
    @inline(__always)
    static func fieldRanges(_ line: UnsafeBufferPointer<UInt8>, into ranges: inout [Range<Int>]) {
        ranges.removeAll(keepingCapacity: true)
        var start = -1
        for offset in 0..<line.count {
            let byte = line[offset]
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") {
                if start >= 0 {
                    ranges.append(start..<offset)
                    start = -1
                }
            } else if start < 0 {
                start = offset
            }
        }
        if start >= 0 { ranges.append(start..<line.count) }
    }

    /// Splits on runs of ASCII spaces and tabs.
    public static func fields(_ line: Substring) -> [Substring] {
        fieldRanges(line).map { line[$0] }
    }

    public static func fields(_ line: String) -> [Substring] {
        fields(line[...])
    }

    /// The first field of `line`, without splitting the rest (a `/proc/stat` `intr` line holds
    /// thousands of counters that most readers skip).
    public static func firstField(_ line: Substring) -> Substring? {
        let utf8 = line.utf8
        guard let start = utf8.firstIndex(where: { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }) else {
            return nil
        }
        let end = utf8[start...].firstIndex(where: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") })
        return Substring(utf8[start..<(end ?? utf8.endIndex)])
    }

    /// Where each field of `fields(_:)` lies in the line, so that a parser can take the text
    /// between or after fields exactly as written (mount points, argument lists).
    ///
    /// Scans the UTF-8 bytes (a blank is one ASCII byte, never part of a longer character), so
    /// the ranges fall on character boundaries as written.
    public static func fieldRanges(_ line: Substring) -> [Range<Substring.Index>] {
        let utf8 = line.utf8
        let fast = utf8.withContiguousStorageIfAvailable { buffer -> [Range<Substring.Index>] in
            var ranges: [Range<Substring.Index>] = []
            var start = -1
            var previous = (offset: 0, index: utf8.startIndex)
            func index(_ offset: Int) -> Substring.Index {
                let index = utf8.index(previous.index, offsetBy: offset - previous.offset)
                previous = (offset, index)
                return index
            }
            for offset in 0..<buffer.count {
                let byte = buffer[offset]
                if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") {
                    if start >= 0 {
                        let lower = index(start)
                        ranges.append(lower..<index(offset))
                        start = -1
                    }
                } else if start < 0 {
                    start = offset
                }
            }
            if start >= 0 { ranges.append(index(start)..<utf8.endIndex) }
            return ranges
        }
        if let fast { return fast }
        var ranges: [Range<Substring.Index>] = []
        var start: Substring.Index?
        var index = utf8.startIndex
        while index < utf8.endIndex {
            let byte = utf8[index]
            let blank = byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
            if blank, let begin = start {
                ranges.append(begin..<index)
                start = nil
            } else if !blank, start == nil {
                start = index
            }
            index = utf8.index(after: index)
        }
        if let begin = start { ranges.append(begin..<utf8.endIndex) }
        return ranges
    }

    /// A decimal number written with `.` or `,` as decimal separator (`47.50`, `47,50`).
    public static func localizedDouble(_ token: Substring) -> Double? {
        if let value = Double(token) { return value }
        guard token.contains(",") else { return nil }
        return Double(token.replacingOccurrences(of: ",", with: "."))
    }

    /// A non-negative integer counter, as `UInt64(token)` reads it; plain digits are read from
    /// the UTF-8 bytes directly, which the kernel files' hundreds of counters per tick need.
    public static func counter(_ token: Substring) -> UInt64? {
        let fast = token.utf8.withContiguousStorageIfAvailable { bytes -> UInt64?? in
            guard let value = counter(bytes) else { return bytes.isEmpty ? .some(nil) : nil }
            return .some(value)
        }
        if let fast, let result = fast { return result }
        return UInt64(token)
    }

    /// A counter written as plain ASCII digits; `nil` for anything else (a sign, a blank, an
    /// overflow), which callers report as a bad counter.
    @inline(__always)
    static func counter(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64? {
        guard !bytes.isEmpty else { return nil }
        var value: UInt64 = 0
        for byte in bytes {
            guard byte >= 48, byte <= 57 else { return nil }
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times.addingReportingOverflow(UInt64(byte - 48))
            if overflow || carry { return nil }
            value = sum
        }
        return value
    }

    /// `range` without the ASCII spaces and tabs at either end.
    static func trimmingBlanks(_ line: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Range<Int> {
        func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var start = range.lowerBound
        var end = range.upperBound
        while start < end, isBlank(line[start]) { start += 1 }
        while end > start, isBlank(line[end - 1]) { end -= 1 }
        return start..<end
    }

    /// The bytes of `range` within `bytes`.
    @inline(__always)
    static func slice(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: bytes[range])
    }

    /// The text of a byte range, for names and error messages.
    static func text(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>? = nil) -> String {
        String(decoding: range.map { slice(bytes, $0) } ?? bytes, as: UTF8.self)
    }

    /// A size with an optional binary suffix, in bytes: `4.0K`, `12G`, `8,6Mi`, `0B`, `874m`,
    /// `1946M+` (macOS top change marker). `unit` is the multiplier of a bare number. `nil` both for
    /// a token that is no size and for one out of range (``readSize(_:unit:)`` tells them apart).
    public static func scaledSize(_ token: Substring, unit: UInt64 = 1) -> UInt64? {
        readSize(token, unit: unit)?.value
    }
}

extension Double {
    /// The value rounded to `places` decimals: figures derived from printed percentages
    /// (`100 − 97.49`) should not carry binary noise (`2.510000000000005`) into the output.
    func rounded(toPlaces places: Int) -> Double {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        return (self * scale).rounded() / scale
    }
}

extension Substring {
    fileprivate func replacingOccurrences(of target: Character, with replacement: Character) -> String {
        String(map { $0 == target ? replacement : $0 })
    }
}
