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

    // meminfo collector: one family per /proc/meminfo field, named after it.
    public static let memTotal = memory("MemTotal")
    public static let memFree = memory("MemFree")
    public static let memAvailable = memory("MemAvailable")
    public static let buffers = memory("Buffers")
    public static let swapTotal = memory("SwapTotal")
    public static let swapFree = memory("SwapFree")

    static func memory(_ field: String) -> MetricFamily {
        MetricFamily(
            "node_memory_\(field)_bytes", .gauge, help: "Memory information field \(field)_bytes.")
    }

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

    // netdev collector
    public static let networkReceiveBytes = network("receive_bytes")
    public static let networkTransmitBytes = network("transmit_bytes")
    public static let networkReceiveErrors = network("receive_errs")
    public static let networkTransmitErrors = network("transmit_errs")
    public static let networkReceiveDrop = network("receive_drop")
    public static let networkTransmitDrop = network("transmit_drop")

    static func network(_ statistic: String) -> MetricFamily {
        MetricFamily(
            "node_network_\(statistic)_total", .counter, help: "Network device statistic \(statistic).")
    }

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

    /// Every family, in the order an exposition lists them (node_exporter's: by name).
    public static let all: [MetricFamily] = [
        bootTime, cpuGuestSeconds, cpuSeconds,
        diskDiscardTime, diskDiscardedSectors, diskDiscardsCompleted, diskDiscardsMerged, diskFlushRequests,
        diskFlushRequestsTime, diskIONow, diskIOTime, diskIOTimeWeighted, diskReadBytes, diskReadTime,
        diskReadsCompleted, diskReadsMerged, diskWriteTime, diskWritesCompleted, diskWritesMerged, diskWrittenBytes,
        filesystemAvail, filesystemFiles, filesystemFilesFree, filesystemFree, filesystemSize,
        load1, load15, load5,
        buffers, memAvailable, memFree, memTotal, swapFree, swapTotal,
        networkReceiveBytes, networkReceiveDrop, networkReceiveErrors, networkTransmitBytes, networkTransmitDrop,
        networkTransmitErrors,
        osInfo, unameInfo,
    ]
}
