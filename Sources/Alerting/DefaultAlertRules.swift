/// The rules hostscope ships: node_exporter's node-mixin alerts, named and tuned as there, over hostscope's
/// figures, and hostscope's own about collection.
enum DefaultAlertRules {
    static let text = #"""
        # hostscope alert rules: the shipped defaults (`hostscope alerts defaults`).
        # Names, thresholds and durations follow node_exporter's node-mixin; docs/alerts.md describes the format.
        rules:
          - alert: NodeFilesystemSpaceFillingUp
            when:
              - filesystem_avail_percent < 40
              - predict_linear(filesystem_avail_bytes[6h], 24h) < 0
              - filesystem_readonly == 0
            for: 1h
            severity: warning
            annotations:
              summary: Filesystem is predicted to run out of space within the next 24 hours.
              description: Filesystem on {{ $labels.device }}, mounted on {{ $labels.mountpoint }}, at {{ $labels.instance }} has only {{ printf "%.2f" $value }}% available space left and is filling up.
          - alert: NodeFilesystemSpaceFillingUp
            when:
              - filesystem_avail_percent < 20
              - predict_linear(filesystem_avail_bytes[6h], 4h) < 0
              - filesystem_readonly == 0
            for: 1h
            severity: critical
            annotations:
              summary: Filesystem is predicted to run out of space within the next 4 hours.
              description: Filesystem on {{ $labels.device }}, mounted on {{ $labels.mountpoint }}, at {{ $labels.instance }} has only {{ printf "%.2f" $value }}% available space left and is filling up fast.
          - alert: NodeFilesystemAlmostOutOfSpace
            when:
              - filesystem_avail_percent < 5
              - filesystem_readonly == 0
            for: 30m
            severity: warning
            annotations:
              summary: Filesystem has less than 5% space left.
              description: Filesystem on {{ $labels.device }}, mounted on {{ $labels.mountpoint }}, at {{ $labels.instance }} has only {{ printf "%.2f" $value }}% available space left.
          - alert: NodeFilesystemAlmostOutOfSpace
            when:
              - filesystem_avail_percent < 3
              - filesystem_readonly == 0
            for: 30m
            severity: critical
            annotations:
              summary: Filesystem has less than 3% space left.
              description: Filesystem on {{ $labels.device }}, mounted on {{ $labels.mountpoint }}, at {{ $labels.instance }} has only {{ printf "%.2f" $value }}% available space left.
          - alert: NodeFilesystemFilesFillingUp
            when:
              - filesystem_files_free_percent < 40
              - predict_linear(filesystem_files_free[6h], 24h) < 0
              - filesystem_readonly == 0
            for: 1h
            severity: warning
            annotations:
              summary: Filesystem is predicted to run out of inodes within the next 24 hours.
              description: Filesystem on {{ $labels.device }}, mounted on {{ $labels.mountpoint }}, at {{ $labels.instance }} has only {{ printf "%.2f" $value }}% available inodes left and is filling up.
          - alert: NodeFilesystemFilesFillingUp
            when:
              - filesystem_files_free_percent < 20
              - predict_linear(filesystem_files_free[6h], 4h) < 0
              - filesystem_readonly == 0
            for: 1h
            severity: critical
            annotations:
              summary: Filesystem is predicted to run out of inodes within the next 4 hours.
              description: Filesystem on {{ $labels.device }}, mounted on {{ $labels.mountpoint }}, at {{ $labels.instance }} has only {{ printf "%.2f" $value }}% available inodes left and is filling up fast.
          - alert: NodeFilesystemAlmostOutOfFiles
            when:
              - filesystem_files_free_percent < 5
              - filesystem_readonly == 0
            for: 1h
            severity: warning
            annotations:
              summary: Filesystem has less than 5% inodes left.
              description: Filesystem on {{ $labels.device }}, mounted on {{ $labels.mountpoint }}, at {{ $labels.instance }} has only {{ printf "%.2f" $value }}% available inodes left.
          - alert: NodeFilesystemAlmostOutOfFiles
            when:
              - filesystem_files_free_percent < 3
              - filesystem_readonly == 0
            for: 1h
            severity: critical
            annotations:
              summary: Filesystem has less than 3% inodes left.
              description: Filesystem on {{ $labels.device }}, mounted on {{ $labels.mountpoint }}, at {{ $labels.instance }} has only {{ printf "%.2f" $value }}% available inodes left.
          - alert: NodeNetworkReceiveErrs
            when: network_receive_errors_ratio > 0.01
            for: 1h
            severity: warning
            annotations:
              summary: Network interface is reporting many receive errors.
              description: '{{ $labels.instance }} interface {{ $labels.device }} has encountered {{ printf "%.0f" $value }} receive errors per packet in the last two records.'
          - alert: NodeNetworkTransmitErrs
            when: network_transmit_errors_ratio > 0.01
            for: 1h
            severity: warning
            annotations:
              summary: Network interface is reporting many transmit errors.
              description: '{{ $labels.instance }} interface {{ $labels.device }} has encountered {{ printf "%.0f" $value }} transmit errors per packet in the last two records.'
          - alert: NodeClockSkewDetected
            when: clock_skew_seconds > 0.05
            for: 10m
            severity: warning
            annotations:
              summary: Clock skew detected.
              description: Clock at {{ $labels.instance }} is out of sync by more than 0.05s ({{ $value }}s). Ensure NTP is configured correctly on this host.
          - alert: NodeMemoryMajorPagesFaults
            when: major_page_faults_per_second > 500
            for: 15m
            severity: warning
            annotations:
              summary: Memory major page faults are occurring at very high rate.
              description: Memory major pages are occurring at very high rate at {{ $labels.instance }}, 500 major page faults per second for the last 15 minutes, is currently at {{ printf "%.2f" $value }}. Please check that there is enough memory available at this instance.
          - alert: NodeMemoryHighUtilization
            when: memory_used_percent > 90
            for: 15m
            severity: warning
            annotations:
              summary: Host is running out of memory.
              description: Memory is filling up at {{ $labels.instance }}, has been above 90% for the last 15 minutes, is currently at {{ printf "%.2f" $value }}%.
          - alert: NodeCPUHighUsage
            when: cpu_busy_percent > 90
            for: 15m
            severity: info
            annotations:
              summary: High CPU usage.
              description: CPU usage at {{ $labels.instance }} has been above 90% for the last 15 minutes, is currently at {{ printf "%.2f" $value }}%.
          - alert: NodeSystemSaturation
            when: load1_per_cpu > 2
            for: 15m
            severity: warning
            annotations:
              summary: System saturated, load per core is very high.
              description: System load per core at {{ $labels.instance }} has been above 2 for the last 15 minutes, is currently at {{ printf "%.2f" $value }}. This might indicate this instance resources saturation and can cause it becoming unresponsive.
          - alert: NodeDiskIOSaturation
            when: disk_io_weighted_seconds_per_second > 10
            for: 30m
            severity: warning
            annotations:
              summary: Disk IO queue is high.
              description: Disk IO queue (aqu-sq) is high on {{ $labels.device }} at {{ $labels.instance }}, has been above 10 for the last 30 minutes, is currently at {{ printf "%.2f" $value }}. This symptom might indicate disk saturation.
          - alert: HostUnreachable
            when: unreachable_records >= 3
            severity: critical
            annotations:
              summary: Host cannot be reached over SSH.
              description: '{{ $labels.instance }} could not be reached (connect or timeout) for {{ $value }} collections in a row.'
          - alert: HostKeyChanged
            when: host_key_changed == 1
            severity: critical
            annotations:
              summary: Host key changed.
              description: The host key of {{ $labels.instance }} no longer matches known_hosts; hostscope refuses to connect until it is checked.
          - alert: HostCollectionFailing
            when: failing_records >= 5
            severity: warning
            annotations:
              summary: Collection from the host keeps failing.
              description: 'Collecting from {{ $labels.instance }} failed {{ $value }} times in a row.'
        """#
}
