import Foundation
import TestSupport

/// Reads fixtures by their path under `Fixtures/`.
enum FixtureText {
    static func read(_ path: String) throws -> String {
        String(decoding: try Data(contentsOf: Repository.fixtures.appendingPathComponent(path)), as: UTF8.self)
    }

    /// The columns of each line of a tab-separated manifest under `Fixtures/` (comments and blank
    /// lines left out); empty when the file cannot be read.
    static func manifestRows(_ path: String) -> [[String]] {
        guard let text = try? read(path) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            if line.hasPrefix("#") || line.isEmpty { return nil }
            return line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        }
    }

    /// The parts of a capture that holds several commands' outputs separated by a line starting
    /// with `---` (as `free -k; echo "--- …"; cat /proc/meminfo` prints).
    static func sections(_ path: String) throws -> [String] {
        var sections = [""]
        for line in try read(path).split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("---") {
                sections.append("")
            } else {
                sections[sections.count - 1] += line + "\n"
            }
        }
        return sections
    }
}
