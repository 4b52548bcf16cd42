import Foundation

/// Alert rules the command-line tests share.
enum AlertTestRules {
    /// Memory in use (always true) for half a second: fires on the second or third record of any host.
    static let memoryInUse = """
        rules:
          - alert: MemoryInUse
            when: memory_used_percent >= 0
            for: 500ms
            severity: info
            labels: {team: ops}
            annotations:
              summary: 'memory at {{ printf "%.1f" $value }}% on {{ $labels.instance }}'
        """

    /// `text` in a new temporary file, whose path it returns.
    static func file(_ text: String) throws -> String {
        let path = NSTemporaryDirectory() + "hostscope-rules-\(UUID().uuidString).yml"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Writes `directory/rules.yml` (over an earlier one: a reload's new rules): MemoryInUse over
    /// `memory_used_percent >= threshold` held for a second, with `severity` and a summary naming the value and
    /// the host; returns its path.
    static func writeMemoryRule(threshold: String, severity: String, in directory: String) throws -> String {
        let path = directory + "/rules.yml"
        try """
        rules:
          - alert: MemoryInUse
            when: memory_used_percent >= \(threshold)
            for: 1s
            severity: \(severity)
            annotations:
              summary: 'memory at {{ printf "%.1f" $value }}% on {{ $labels.instance }}'
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}
