import HostStats

/// The node_exporter families hostscope has figures for, under node_exporter's names, types, help
/// texts and label names, so dashboards and alerts written for node_exporter read them unchanged.
public enum NodeExporterFamilies {
    // cpu collector (/proc/stat, per logical CPU)
    public static let cpuSeconds = MetricFamily(
        "node_cpu_seconds_total", .counter, help: "Seconds the CPUs spent in each mode.")
    public static let cpuGuestSeconds = MetricFamily(
        "node_cpu_guest_seconds_total", .counter, help: "Seconds the CPUs spent in guests (VMs) for each mode.")

    // stat collector
    public static let bootTime = MetricFamily("node_boot_time_seconds", .gauge, help: "Node boot time, in unixtime.")

    // loadavg collector
    public static let load1 = MetricFamily("node_load1", .gauge, help: "1m load average.")
    public static let load5 = MetricFamily("node_load5", .gauge, help: "5m load average.")
    public static let load15 = MetricFamily("node_load15", .gauge, help: "15m load average.")

    public static let contextSwitches = MetricFamily(
        "node_context_switches_total", .counter, help: "Total number of context switches.")
    public static let interrupts = MetricFamily(
        "node_intr_total", .counter, help: "Total number of interrupts serviced.")
    public static let forks = MetricFamily("node_forks_total", .counter, help: "Total number of forks.")
    public static let procsRunning = MetricFamily(
        "node_procs_running", .gauge, help: "Number of processes in runnable state.")
    public static let procsBlocked = MetricFamily(
        "node_procs_blocked", .gauge, help: "Number of processes blocked waiting for I/O to complete.")

    // meminfo collector: one family per /proc/meminfo field, named after it.
    public static let memTotal = memory("MemTotal_bytes")
    public static let memFree = memory("MemFree_bytes")
    public static let memAvailable = memory("MemAvailable_bytes")
    public static let buffers = memory("Buffers_bytes")
    public static let swapTotal = memory("SwapTotal_bytes")
    public static let swapFree = memory("SwapFree_bytes")

    /// The family of a `/proc/meminfo` field under node_exporter's name for it (`Active_anon_bytes`,
    /// `HugePages_Total`).
    public static func memory(_ field: String) -> MetricFamily {
        MetricFamily("node_memory_\(field)", .gauge, help: "Memory information field \(field).")
    }

    /// The meminfo fields of current kernels (Linux 6.x, as node_exporter 1.5 names them): listed
    /// families whose header an exposition writes in its fixed order. A field only another kernel has
    /// is exported all the same, after them.
    static let memoryFields = [
        "Active_anon_bytes", "Active_bytes", "Active_file_bytes", "AnonHugePages_bytes", "AnonPages_bytes",
        "Balloon_bytes", "Bounce_bytes", "Buffers_bytes", "Cached_bytes", "CmaFree_bytes", "CmaTotal_bytes",
        "CommitLimit_bytes", "Committed_AS_bytes", "DirectMap1G_bytes", "DirectMap2M_bytes", "DirectMap4k_bytes",
        "Dirty_bytes", "FileHugePages_bytes", "FilePmdMapped_bytes", "HardwareCorrupted_bytes", "HugePages_Free",
        "HugePages_Rsvd", "HugePages_Surp", "HugePages_Total", "Hugepagesize_bytes", "Hugetlb_bytes",
        "Inactive_anon_bytes", "Inactive_bytes", "Inactive_file_bytes", "KReclaimable_bytes", "KernelStack_bytes",
        "Mapped_bytes", "MemAvailable_bytes", "MemFree_bytes", "MemTotal_bytes", "Mlocked_bytes",
        "NFS_Unstable_bytes", "PageTables_bytes", "Percpu_bytes", "SReclaimable_bytes", "SUnreclaim_bytes",
        "SecPageTables_bytes", "ShmemHugePages_bytes", "ShmemPmdMapped_bytes", "Shmem_bytes", "Slab_bytes",
        "SwapCached_bytes", "SwapFree_bytes", "SwapTotal_bytes", "Unevictable_bytes", "VmallocChunk_bytes",
        "VmallocTotal_bytes", "VmallocUsed_bytes", "WritebackTmp_bytes", "Writeback_bytes", "Zswap_bytes",
        "Zswapped_bytes",
    ]

    // vmstat collector: node_exporter's default fields.
    /// The family of a `/proc/vmstat` field.
    public static func vmstat(_ field: String) -> MetricFamily {
        MetricFamily("node_vmstat_\(field)", .untyped, help: "/proc/vmstat information field \(field).")
    }

    static let vmstatFields = ["oom_kill", "pgfault", "pgmajfault", "pgpgin", "pgpgout", "pswpin", "pswpout"]

    // netstat collector: `Protocol_Field` of /proc/net/{netstat,snmp,snmp6}.
    /// The family of a netstat figure (`Tcp_ActiveOpens`).
    public static func netstat(_ key: String) -> MetricFamily {
        MetricFamily(
            "node_netstat_\(key)", .untyped, help: "Statistic \(key.filter { $0 != "_" }).")
    }

    static let netstatFields = [
        "Icmp6_InErrors", "Icmp6_InMsgs", "Icmp6_OutMsgs", "Icmp_InErrors", "Icmp_InMsgs", "Icmp_OutMsgs",
        "Ip6_InOctets", "Ip6_OutOctets", "IpExt_InOctets", "IpExt_OutOctets", "Ip_Forwarding", "TcpExt_ListenDrops",
        "TcpExt_ListenOverflows", "TcpExt_SyncookiesFailed", "TcpExt_SyncookiesRecv", "TcpExt_SyncookiesSent",
        "TcpExt_TCPSynRetrans", "TcpExt_TCPTimeouts", "Tcp_ActiveOpens", "Tcp_CurrEstab", "Tcp_InErrs", "Tcp_InSegs",
        "Tcp_OutRsts", "Tcp_OutSegs", "Tcp_PassiveOpens", "Tcp_RetransSegs", "Udp6_InDatagrams", "Udp6_InErrors",
        "Udp6_NoPorts", "Udp6_OutDatagrams", "Udp6_RcvbufErrors", "Udp6_SndbufErrors", "UdpLite6_InErrors",
        "UdpLite_InErrors", "Udp_InDatagrams", "Udp_InErrors", "Udp_NoPorts", "Udp_OutDatagrams", "Udp_RcvbufErrors",
        "Udp_SndbufErrors",
    ]

    // sockstat collector: `PROTOCOL_state` of /proc/net/sockstat and sockstat6.
    /// The family of a sockstat figure (`TCP_inuse`, `TCP_mem_bytes`, `sockets_used`).
    public static func sockstat(_ key: String) -> MetricFamily {
        if key == "sockets_used" {
            return MetricFamily("node_sockstat_sockets_used", .gauge, help: "Number of IPv4 sockets in use.")
        }
        let underscore = key.firstIndex(of: "_") ?? key.endIndex
        let state = key[underscore...].dropFirst()
        return MetricFamily(
            "node_sockstat_\(key)", .gauge, help: "Number of \(key[..<underscore]) sockets in state \(state).")
    }

    static let sockstatFields = [
        "FRAG6_inuse", "FRAG6_memory", "FRAG_inuse", "FRAG_memory", "RAW6_inuse", "RAW_inuse", "TCP6_inuse",
        "TCP_alloc", "TCP_inuse", "TCP_mem", "TCP_mem_bytes", "TCP_orphan", "TCP_tw", "UDP6_inuse", "UDPLITE6_inuse",
        "UDPLITE_inuse", "UDP_inuse", "UDP_mem", "UDP_mem_bytes", "sockets_used",
    ]

    // pressure collector
    public static let pressureCPUWaiting = MetricFamily(
        "node_pressure_cpu_waiting_seconds_total", .counter,
        help: "Total time in seconds that processes have waited for CPU time")
    public static let pressureIOWaiting = MetricFamily(
        "node_pressure_io_waiting_seconds_total", .counter,
        help: "Total time in seconds that processes have waited due to IO congestion")
    public static let pressureIOStalled = MetricFamily(
        "node_pressure_io_stalled_seconds_total", .counter,
        help: "Total time in seconds no process could make progress due to IO congestion")
    public static let pressureMemoryWaiting = MetricFamily(
        "node_pressure_memory_waiting_seconds_total", .counter,
        help: "Total time in seconds that processes have waited for memory")
    public static let pressureMemoryStalled = MetricFamily(
        "node_pressure_memory_stalled_seconds_total", .counter,
        help: "Total time in seconds no process could make progress due to memory congestion")

    // filefd, entropy, conntrack, softnet, udp_queues, arp, time, textfile collectors
    public static let filefdAllocated = MetricFamily(
        "node_filefd_allocated", .gauge, help: "File descriptor statistics: allocated.")
    public static let filefdMaximum = MetricFamily(
        "node_filefd_maximum", .gauge, help: "File descriptor statistics: maximum.")
    public static let entropyAvailable = MetricFamily(
        "node_entropy_available_bits", .gauge, help: "Bits of available entropy.")
    public static let entropyPoolSize = MetricFamily(
        "node_entropy_pool_size_bits", .gauge, help: "Bits of entropy pool.")
    public static let conntrackEntries = MetricFamily(
        "node_nf_conntrack_entries", .gauge,
        help: "Number of currently allocated flow entries for connection tracking.")
    public static let conntrackLimit = MetricFamily(
        "node_nf_conntrack_entries_limit", .gauge, help: "Maximum size of connection tracking table.")
    /// The family of a column of `/proc/net/stat/nf_conntrack` (``ProcConntrackStatParser/fields``), with
    /// node_exporter's help (a gauge there, though the kernel counts up).
    public static func conntrackStat(_ field: String) -> MetricFamily {
        MetricFamily(
            "node_nf_conntrack_stat_\(field)", .gauge, help: conntrackStatHelp[field] ?? "Conntrack statistic \(field)."
        )
    }

    static let conntrackStatHelp = [
        "found": "Number of searched entries which were successful.",
        "invalid": "Number of packets seen which can not be tracked.",
        "ignore": "Number of packets seen which are already connected to a conntrack entry.",
        "insert": "Number of entries inserted into the list.",
        "insert_failed": "Number of entries for which list insertion was attempted but failed.",
        "drop": "Number of packets dropped due to conntrack failure.",
        "early_drop":
            "Number of dropped conntrack entries to make room for new ones, if maximum table size was reached.",
        "search_restart": "Number of conntrack table lookups which had to be restarted due to hashtable resizes.",
    ]

    public static let softnetProcessed = MetricFamily(
        "node_softnet_processed_total", .counter, help: "Number of processed packets")
    public static let softnetDropped = MetricFamily(
        "node_softnet_dropped_total", .counter, help: "Number of dropped packets")
    public static let softnetSqueezed = MetricFamily(
        "node_softnet_times_squeezed_total", .counter, help: "Number of times processing packets ran out of quota")
    public static let udpQueues = MetricFamily(
        "node_udp_queues", .gauge, help: "Number of allocated memory in the kernel for UDP datagrams in bytes.")
    public static let arpEntries = MetricFamily("node_arp_entries", .gauge, help: "ARP entries by device")
    public static let timeSeconds = MetricFamily(
        "node_time_seconds", .gauge, help: "System time in seconds since epoch (1970).")
    public static let textfileScrapeError = MetricFamily(
        "node_textfile_scrape_error", .gauge, help: "1 if there was an error opening or reading a file, 0 otherwise")
    public static let textfileMtime = MetricFamily(
        "node_textfile_mtime_seconds", .gauge, help: "Unixtime mtime of textfiles successfully read.")

    // filesystem collector
    public static let filesystemSize = MetricFamily(
        "node_filesystem_size_bytes", .gauge, help: "Filesystem size in bytes.")
    public static let filesystemFree = MetricFamily(
        "node_filesystem_free_bytes", .gauge, help: "Filesystem free space in bytes.")
    public static let filesystemAvail = MetricFamily(
        "node_filesystem_avail_bytes", .gauge, help: "Filesystem space available to non-root users in bytes.")
    public static let filesystemFiles = MetricFamily(
        "node_filesystem_files", .gauge, help: "Filesystem total file nodes.")
    public static let filesystemFilesFree = MetricFamily(
        "node_filesystem_files_free", .gauge, help: "Filesystem total free file nodes.")
    public static let filesystemReadonly = MetricFamily(
        "node_filesystem_readonly", .gauge, help: "Filesystem read-only status.")
    public static let filesystemDeviceError = MetricFamily(
        "node_filesystem_device_error", .gauge,
        help: "Whether an error occurred while getting statistics for the given device.")

    // netdev collector
    public static let networkReceiveBytes = network("receive_bytes")
    public static let networkTransmitBytes = network("transmit_bytes")
    public static let networkReceiveErrors = network("receive_errs")
    public static let networkTransmitErrors = network("transmit_errs")
    public static let networkReceiveDrop = network("receive_drop")
    public static let networkTransmitDrop = network("transmit_drop")

    /// The family of a `/proc/net/dev` column (`receive_packets`).
    public static func network(_ statistic: String) -> MetricFamily {
        MetricFamily(
            "node_network_\(statistic)_total", .counter, help: "Network device statistic \(statistic).")
    }

    static let networkStatistics = [
        "receive_bytes", "receive_compressed", "receive_drop", "receive_errs", "receive_fifo", "receive_frame",
        "receive_multicast", "receive_nohandler", "receive_packets", "transmit_bytes", "transmit_carrier",
        "transmit_colls",
        "transmit_compressed", "transmit_drop", "transmit_errs", "transmit_fifo", "transmit_packets",
    ]

    // netclass collector (/sys/class/net)
    /// A numeric `/sys/class/net` property under node_exporter's name (`mtu_bytes`, `iface_id`).
    public static func networkProperty(_ property: String, _ type: MetricType = .gauge) -> MetricFamily {
        MetricFamily("node_network_\(property)", type, help: "Network device property: \(property)")
    }

    public static let networkInfo = MetricFamily(
        "node_network_info", .gauge, help: "Non-numeric data from /sys/class/net/<iface>, value is always 1.")
    public static let networkUp = MetricFamily(
        "node_network_up", .gauge, help: "Value is 1 if operstate is 'up', 0 otherwise.")

    /// `/sys/class/net` attribute → node_exporter's property name, for the numeric gauges.
    static let networkGaugeProperties: [(attribute: String, property: String)] = [
        ("addr_assign_type", "address_assign_type"), ("carrier", "carrier"), ("dev_id", "device_id"),
        ("dormant", "dormant"), ("flags", "flags"), ("ifindex", "iface_id"), ("iflink", "iface_link"),
        ("link_mode", "iface_link_mode"), ("mtu", "mtu_bytes"), ("name_assign_type", "name_assign_type"),
        ("netdev_group", "net_dev_group"), ("type", "protocol_type"), ("tx_queue_len", "transmit_queue_length"),
    ]
    static let networkCounterProperties: [(attribute: String, property: String)] = [
        ("carrier_changes", "carrier_changes_total"), ("carrier_down_count", "carrier_down_changes_total"),
        ("carrier_up_count", "carrier_up_changes_total"),
    ]

    // diskstats collector
    public static let diskReadsCompleted = MetricFamily(
        "node_disk_reads_completed_total", .counter, help: "The total number of reads completed successfully.")
    public static let diskReadsMerged = MetricFamily(
        "node_disk_reads_merged_total", .counter, help: "The total number of reads merged.")
    public static let diskReadBytes = MetricFamily(
        "node_disk_read_bytes_total", .counter, help: "The total number of bytes read successfully.")
    public static let diskReadTime = MetricFamily(
        "node_disk_read_time_seconds_total", .counter, help: "The total number of seconds spent by all reads.")
    public static let diskWritesCompleted = MetricFamily(
        "node_disk_writes_completed_total", .counter, help: "The total number of writes completed successfully.")
    public static let diskWritesMerged = MetricFamily(
        "node_disk_writes_merged_total", .counter, help: "The number of writes merged.")
    public static let diskWrittenBytes = MetricFamily(
        "node_disk_written_bytes_total", .counter, help: "The total number of bytes written successfully.")
    public static let diskWriteTime = MetricFamily(
        "node_disk_write_time_seconds_total", .counter, help: "This is the total number of seconds spent by all writes."
    )
    public static let diskIONow = MetricFamily(
        "node_disk_io_now", .gauge, help: "The number of I/Os currently in progress.")
    public static let diskIOTime = MetricFamily(
        "node_disk_io_time_seconds_total", .counter, help: "Total seconds spent doing I/Os.")
    public static let diskIOTimeWeighted = MetricFamily(
        "node_disk_io_time_weighted_seconds_total", .counter, help: "The weighted # of seconds spent doing I/Os.")
    public static let diskDiscardsCompleted = MetricFamily(
        "node_disk_discards_completed_total", .counter, help: "The total number of discards completed successfully.")
    public static let diskDiscardsMerged = MetricFamily(
        "node_disk_discards_merged_total", .counter, help: "The total number of discards merged.")
    public static let diskDiscardedSectors = MetricFamily(
        "node_disk_discarded_sectors_total", .counter, help: "The total number of sectors discarded successfully.")
    public static let diskDiscardTime = MetricFamily(
        "node_disk_discard_time_seconds_total", .counter,
        help: "This is the total number of seconds spent by all discards.")
    public static let diskFlushRequests = MetricFamily(
        "node_disk_flush_requests_total", .counter, help: "The total number of flush requests completed successfully")
    public static let diskFlushRequestsTime = MetricFamily(
        "node_disk_flush_requests_time_seconds_total", .counter,
        help: "This is the total number of seconds spent by all flush requests.")

    // uname and os collectors
    public static let unameInfo = MetricFamily(
        "node_uname_info", .gauge, help: "Labeled system information as provided by the uname system call.")
    public static let osInfo = MetricFamily(
        "node_os_info", .gauge,
        help: "A metric with a constant '1' value labeled by build_id, id, id_like, image_id, image_version, "
            + "name, pretty_name, variant, variant_id, version, version_codename, version_id.")

    public static let diskInfo = MetricFamily("node_disk_info", .gauge, help: "Info of /sys/block/<block_device>.")

    public static let osVersion = MetricFamily(
        "node_os_version", .gauge, help: "Metric containing the major.minor part of the OS version.")

    // timex collector (adjtimex)
    static func timex(_ name: String, _ type: MetricType = .gauge, help: String) -> MetricFamily {
        MetricFamily("node_timex_\(name)", type, help: help)
    }
    public static let timexOffset = timex(
        "offset_seconds", help: "Time offset in between local system and reference clock.")
    public static let timexFrequency = timex("frequency_adjustment_ratio", help: "Local clock frequency adjustment.")
    public static let timexMaxError = timex("maxerror_seconds", help: "Maximum error in seconds.")
    public static let timexEstimatedError = timex("estimated_error_seconds", help: "Estimated error in seconds.")
    public static let timexStatus = timex("status", help: "Value of the status array bits.")
    public static let timexConstant = timex("loop_time_constant", help: "Phase-locked loop time constant.")
    public static let timexTick = timex("tick_seconds", help: "Seconds between clock ticks.")
    public static let timexPPSFrequency = timex("pps_frequency_hertz", help: "Pulse per second frequency.")
    public static let timexPPSJitter = timex("pps_jitter_seconds", help: "Pulse per second jitter.")
    public static let timexPPSShift = timex("pps_shift_seconds", help: "Pulse per second interval duration.")
    public static let timexPPSStability = timex(
        "pps_stability_hertz", help: "Pulse per second stability, average of recent frequency changes.")
    public static let timexPPSJitterCount = timex(
        "pps_jitter_total", .counter, help: "Pulse per second count of jitter limit exceeded events.")
    public static let timexPPSCalibrationCount = timex(
        "pps_calibration_total", .counter, help: "Pulse per second count of calibration intervals.")
    public static let timexPPSErrorCount = timex(
        "pps_error_total", .counter, help: "Pulse per second count of calibration errors.")
    public static let timexPPSStabilityExceededCount = timex(
        "pps_stability_exceeded_total", .counter, help: "Pulse per second count of stability limit exceeded events.")
    public static let timexTAIOffset = timex("tai_offset_seconds", help: "International Atomic Time (TAI) offset.")
    public static let timexSyncStatus = timex(
        "sync_status", help: "Is clock synchronized to a reliable server (1 = yes, 0 = no).")
    static let timexFamilies = [
        timexOffset, timexFrequency, timexMaxError, timexEstimatedError, timexStatus, timexConstant, timexTick,
        timexPPSFrequency, timexPPSJitter, timexPPSShift, timexPPSStability, timexPPSJitterCount,
        timexPPSCalibrationCount, timexPPSErrorCount, timexPPSStabilityExceededCount, timexTAIOffset,
        timexSyncStatus,
    ]

    /// Every family, in the order an exposition lists them (node_exporter's: by name).
    public static let all: [MetricFamily] = fixed.sorted { $0.name < $1.name }

    private static let fixed: [MetricFamily] =
        memoryFields.map(memory) + vmstatFields.map(vmstat) + netstatFields.map(netstat)
        + sockstatFields.map(sockstat) + networkStatistics.map(network)
        + ProcConntrackStatParser.fields.map(conntrackStat)
        + networkGaugeProperties.map { networkProperty($0.property) }
        + networkCounterProperties.map { networkProperty($0.property, .counter) }
        + [
            networkProperty("speed_bytes"), networkInfo, networkUp, contextSwitches, interrupts, forks, procsRunning,
            procsBlocked, pressureCPUWaiting, pressureIOWaiting, pressureIOStalled, pressureMemoryWaiting,
            pressureMemoryStalled, filefdAllocated, filefdMaximum, entropyAvailable, entropyPoolSize,
            conntrackEntries, conntrackLimit, softnetProcessed, softnetDropped, softnetSqueezed, udpQueues,
            arpEntries, timeSeconds, textfileScrapeError, textfileMtime, filesystemReadonly, filesystemDeviceError,
            osVersion, diskInfo,
        ] + timexFamilies + listedBefore

    private static let listedBefore: [MetricFamily] = [
        bootTime, cpuGuestSeconds, cpuSeconds,
        diskDiscardTime, diskDiscardedSectors, diskDiscardsCompleted, diskDiscardsMerged, diskFlushRequests,
        diskFlushRequestsTime, diskIONow, diskIOTime, diskIOTimeWeighted, diskReadBytes, diskReadTime,
        diskReadsCompleted, diskReadsMerged, diskWriteTime, diskWritesCompleted, diskWritesMerged, diskWrittenBytes,
        filesystemAvail, filesystemFiles, filesystemFilesFree, filesystemFree, filesystemSize,
        load1, load15, load5,
        osInfo, unameInfo,
    ]
}
