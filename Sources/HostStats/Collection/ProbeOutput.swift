/// The output of a probe script, cut into its sections.
///
/// Probes print a marker line before each section: `@@` + a nonce chosen for that run + `:` +
/// the section name, e.g. `@@7f3a9c01:df`. The nonce keeps text from the host (a process
/// argument or mount point containing a line `@@end`) from ending a section early. A section
/// may occur more than once (the two samples of a one-off snapshot); ``sections(named:)``
/// returns them in order. A section printed by `grep -aH '' FILE…` is cut into files with
/// ``prefixedFiles(in:)``.
public struct ProbeOutput: Sendable {
    public struct Section: Sendable, Equatable {
        public var name: String
        public var text: String
    }

    public private(set) var sections: [Section] = []
    /// True when the probe reached its final `@@end` marker: the output is complete.
    public private(set) var isComplete = false

    /// A fresh nonce for one probe run.
    public static func makeNonce() -> String {
        String(UInt64.random(in: 0..<UInt64.max), radix: 16)
    }

    /// The marker line prefix for `nonce`; `@@` alone when the nonce is empty.
    public static func markerPrefix(_ nonce: String) -> String {
        nonce.isEmpty ? "@@" : "@@\(nonce):"
    }

    public init(_ text: String, nonce: String = "") {
        let prefix = Array(Self.markerPrefix(nonce).utf8)
        var current: (name: String, start: String.Index)?
        let utf8 = text.utf8
        var lineStart = utf8.startIndex
        // Walks the bytes once; section texts are slices of `text` between marker lines.
        while lineStart < utf8.endIndex {
            let lineEnd = utf8[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? utf8.endIndex
            let next = lineEnd < utf8.endIndex ? utf8.index(after: lineEnd) : lineEnd
            if utf8[lineStart..<lineEnd].starts(with: prefix) {
                if let section = current {
                    let end = lineStart > section.start ? utf8.index(before: lineStart) : lineStart
                    sections.append(Section(name: section.name, text: String(Substring(utf8[section.start..<end]))))
                }
                let name = String(Substring(utf8[utf8.index(lineStart, offsetBy: prefix.count)..<lineEnd]))
                if name == "end" {
                    isComplete = true
                    current = nil
                } else {
                    current = (name, next)
                }
            }
            lineStart = next
        }
        if let section = current {
            sections.append(Section(name: section.name, text: String(Substring(utf8[section.start..<utf8.endIndex]))))
        }
    }

    /// Every section with this name, in output order.
    public func sections(named name: String) -> [String] {
        sections.filter { $0.name == name }.map(\.text)
    }

    /// The first section with this name.
    public func section(_ name: String) -> String? {
        sections.first { $0.name == name }?.text
    }

    /// Splits the output of `grep -aH '' FILE…` into each file's text, keyed by path, with the
    /// files in output order. grep starts every line with its file's real path, so a file's
    /// content cannot pose as another file, whatever bytes it holds.
    public static func prefixedFiles(in text: String) -> [(path: String, text: String)] {
        var files: [(path: String, text: String)] = []
        var lastPath: Substring.UTF8View?
        for line in TextScanning.lines(text) {
            let utf8 = line.utf8
            guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")) else { continue }
            let path = utf8[utf8.startIndex..<colon]
            let content = Substring(utf8[utf8.index(after: colon)..<utf8.endIndex])
            // grep prints a file's lines together, so a continuation is always the last file.
            if let lastPath, lastPath.elementsEqual(path), !files.isEmpty {
                files[files.count - 1].text += "\n" + content
            } else {
                files.append((String(Substring(path)), String(content)))
                lastPath = path
            }
        }
        return files
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
