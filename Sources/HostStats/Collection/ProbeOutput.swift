import ValueFormats

#if canImport(Glibc)
    import Glibc
#endif

/// The output of a probe script, cut into its sections.
///
/// Probes print a marker line before each section: `@@` + a nonce chosen for that run + `:` +
/// the section name, e.g. `@@7f3a9c01:df`. The nonce keeps text from the host (a process
/// argument or mount point containing a line `@@end`) from ending a section early. A section
/// may occur more than once (the two samples of a one-off snapshot); ``sections(named:)``
/// returns them in order. A section printed by `grep -aH '' FILE…` is cut into files with
/// ``forEachPrefixedFile(in:_:)``.
public struct ProbeOutput: Sendable {
    public struct Section: Sendable, Equatable {
        public var name: String
        public var text: String
    }

    /// The output as it came, and where each section's text lies in it: sections are cut from these
    /// bytes when asked for, so a probe's large sections (every process of the host) are read in place
    /// instead of being copied into strings first.
    private let bytes: [UInt8]
    private let ranges: [(name: String, range: Range<Int>)]
    /// True when the probe reached its final `@@end` marker: the output is complete.
    public let isComplete: Bool
    /// The nonce of the markers this output was cut at.
    public let nonce: String

    /// A fresh nonce for one probe run.
    public static func makeNonce() -> String {
        Hex.randomNonce()
    }

    /// The marker line prefix for `nonce`; `@@` alone when the nonce is empty.
    public static func markerPrefix(_ nonce: String) -> String {
        nonce.isEmpty ? "@@" : "@@\(nonce):"
    }

    public init(_ text: String, nonce: String = "") {
        self.init(bytes: Array(text.utf8), nonce: nonce)
    }

    /// The output of a probe as the host sent it. Bytes that are not UTF-8 become U+FFFD in the text
    /// of the sections, as `String(decoding:as:)` makes them.
    public init(bytes: [UInt8], nonce: String = "") {
        self.bytes = bytes
        self.nonce = nonce
        let prefix = Array(Self.markerPrefix(nonce).utf8)
        var found: [(name: String, range: Range<Int>)] = []
        var complete = false
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            var open: (name: String, start: Int)?
            TextScanning.forEachLine(in: buffer) { start, end in
                guard end - start >= prefix.count, memcmp(base + start, prefix, prefix.count) == 0 else { return }
                // The section before a marker ends at the newline before the marker.
                if let section = open { found.append((section.name, section.start..<max(section.start, start - 1))) }
                let name = String(
                    decoding: UnsafeBufferPointer(
                        start: base + start + prefix.count, count: end - start - prefix.count), as: UTF8.self)
                if name == "end" {
                    complete = true
                    open = nil
                } else {
                    open = (name, min(buffer.count, end + 1))
                }
            }
            if let section = open { found.append((section.name, section.start..<buffer.count)) }
        }
        ranges = found
        isComplete = complete
    }

    /// Every section, in output order.
    public var sections: [Section] {
        ranges.map { Section(name: $0.name, text: text(of: $0.range)) }
    }

    /// Every section with this name, in output order.
    public func sections(named name: String) -> [String] {
        ranges.filter { $0.name == name }.map { text(of: $0.range) }
    }

    /// The first section with this name.
    public func section(_ name: String) -> String? {
        ranges.first { $0.name == name }.map { text(of: $0.range) }
    }

    /// The bytes of every section with this name, in output order, without copying them.
    func sectionBytes(named name: String) -> [ArraySlice<UInt8>] {
        ranges.filter { $0.name == name }.map { bytes[$0.range] }
    }

    private func text(of range: Range<Int>) -> String {
        String(decoding: bytes[range], as: UTF8.self)
    }

    /// Calls `body` with each file of `grep -aH '' FILE…` output: its path and its text (lines
    /// joined by LF, no final LF), as bytes valid only during the call. grep starts every line
    /// with its file's real path, so a file's content cannot pose as another file, whatever
    /// bytes it holds. Nothing is copied into
    /// a `String` unless the caller does so; a probe's hundreds of one-line process files are
    /// read straight from these bytes.
    public static func forEachPrefixedFile(
        in text: String, _ body: (_ path: UnsafeBufferPointer<UInt8>, _ content: UnsafeBufferPointer<UInt8>) -> Void
    ) {
        var text = text
        text.makeContiguousUTF8()
        text.utf8.withContiguousStorageIfAvailable { buffer in forEachPrefixedFile(in: buffer, body) }
    }

    /// The same, over a section's bytes (``sectionBytes(named:)``).
    static func forEachPrefixedFile(
        in bytes: ArraySlice<UInt8>,
        _ body: (_ path: UnsafeBufferPointer<UInt8>, _ content: UnsafeBufferPointer<UInt8>) -> Void
    ) {
        bytes.withUnsafeBufferPointer { buffer in forEachPrefixedFile(in: buffer, body) }
    }

    private static func forEachPrefixedFile(
        in buffer: UnsafeBufferPointer<UInt8>,
        _ body: (_ path: UnsafeBufferPointer<UInt8>, _ content: UnsafeBufferPointer<UInt8>) -> Void
    ) {
        guard let base = buffer.baseAddress else { return }
        // A file of one line (every process file) is handed over where it lies; only a file whose
        // lines must be joined is copied, into `scratch`.
        var scratch: [UInt8] = []
        var current: (start: Int, length: Int, content: Range<Int>, joined: Bool)?
        func flush() {
            guard let current else { return }
            let path = UnsafeBufferPointer(start: base + current.start, count: current.length)
            if current.joined {
                scratch.withUnsafeBufferPointer { body(path, $0) }
            } else {
                body(path, UnsafeBufferPointer(rebasing: buffer[current.content]))
            }
        }
        TextScanning.forEachLine(in: buffer) { start, end in
            guard let colon = memchr(base + start, Int32(UInt8(ascii: ":")), end - start) else { return }
            let pathLength = UnsafeRawPointer(colon) - UnsafeRawPointer(base + start)
            let content = (start + pathLength + 1)..<end
            // grep prints a file's lines together, so a continuation is always the last file.
            if let previous = current, previous.length == pathLength,
                memcmp(base + previous.start, base + start, pathLength) == 0
            {
                if !previous.joined {
                    scratch.removeAll(keepingCapacity: true)
                    scratch.append(contentsOf: buffer[previous.content])
                    current?.joined = true
                }
                scratch.append(UInt8(ascii: "\n"))
                scratch.append(contentsOf: buffer[content])
            } else {
                flush()
                current = (start, pathLength, content, false)
            }
        }
        flush()
    }

    /// Splits the output of `head -n N FILE…` into each file's text, keyed by path. `head`
    /// prints `==> PATH <==` before each file and a blank line between files.
    public static func files(in text: String) -> [String: String] {
        var result: [String: String] = [:]
        var path: String?
        var lines: [Substring] = []
        func flush() {
            guard let path else { return }
            while lines.last?.isEmpty == true { lines.removeLast() }
            result[path] = lines.joined(separator: "\n") + (lines.isEmpty ? "" : "\n")
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("==> "), line.hasSuffix(" <==") {
                flush()
                path = String(line.dropFirst(4).dropLast(4))
                lines = []
            } else {
                lines.append(line)
            }
        }
        flush()
        return result
    }
}
