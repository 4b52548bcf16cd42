/// The output of a probe script, cut into its sections.
///
/// Probes print `@@name` on a line of its own before each section. A section may occur more
/// than once (the two samples of a one-off snapshot); ``sections(named:)`` returns them in order.
/// A section printed by `head` over several files is further cut into files with
/// ``files(in:)``.
public struct ProbeOutput: Sendable {
    public struct Section: Sendable, Equatable {
        public var name: String
        public var text: String
    }

    public private(set) var sections: [Section] = []
    /// True when the probe reached its final `@@end` marker: the output is complete.
    public private(set) var isComplete = false

    public init(_ text: String) {
        var current: Section?
        var lines: [Substring] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("@@") {
                if var section = current {
                    section.text = lines.joined(separator: "\n")
                    sections.append(section)
                }
                lines = []
                let name = String(line.dropFirst(2))
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
