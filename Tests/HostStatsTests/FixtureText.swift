import Foundation
import TestSupport

/// Reads fixtures by their path under `Fixtures/`.
enum FixtureText {
    static func read(_ path: String) throws -> String {
        String(decoding: try Data(contentsOf: Repository.fixtures.appendingPathComponent(path)), as: UTF8.self)
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
