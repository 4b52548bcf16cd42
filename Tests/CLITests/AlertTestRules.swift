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
}
