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
}
