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
        let prefix = Self.markerPrefix(nonce)
        var current: Section?
        var lines: [Substring] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(prefix) {
                if var section = current {
                    section.text = lines.joined(separator: "\n")
                    sections.append(section)
                }
                lines = []
                let name = String(line.dropFirst(prefix.count))
                if name == "end" {
                    isComplete = true
                    current = nil
                } else {
                    current = Section(name: name, text: "")
                }
            } else if current != nil {
                lines.append(line)
            }
        }
        if var section = current {
            section.text = lines.joined(separator: "\n")
            sections.append(section)
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
        var index: [Substring: Int] = [:]
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let path = line[..<colon]
            let content = line[line.index(after: colon)...]
            if let position = index[path] {
                files[position].text += "\n" + content
            } else {
                index[path] = files.count
                files.append((String(path), String(content)))
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
