extension MemoryStats {
    /// The formulas that `definition` names, so that consumers can compare `used_bytes` across
    /// tools and versions that disagree on what "used" means.
    public enum Definition {
        /// `MemTotal − MemAvailable`: procps ≥ 4.0 `free`, and hostscope's Linux figure.
        public static let totalMinusAvailable = "total-available"
        /// `total − free − buffers − cache`, where cache is `Cached + SReclaimable`: procps
        /// 3.3.10–3.3.17 and BusyBox ≥ 1.24 `free`, and the fallback for kernels without
        /// `MemAvailable`.
        public static let totalMinusFreeBuffCache = "total-free-buff/cache"
        /// `total − free − buffers − cached`, with `Cached` alone: the `-/+ buffers/cache` line
        /// of procps ≤ 3.3.9.
        public static let totalMinusFreeBuffersCached = "total-free-buffers-cached"
        /// `total − free − buffers`: the `-/+ buffers` line of old BusyBox `free`.
        public static let totalMinusFreeBuffers = "total-free-buffers"
        /// `total − free`: what old `free` and BusyBox print in the `used` column of `Mem:`, and
        /// macOS `top`'s `PhysMem: … used`.
        public static let totalMinusFree = "total-free"
        /// macOS `vm_stat`: app memory (anonymous − purgeable pages) + wired + compressor-occupied
        /// pages, Activity Monitor's "Memory Used".
        public static let macOSAppWiredCompressed = "app+wired+compressed"
        /// macOS `vm_stat` before the compressor (10.8 and older): active + wired pages.
        public static let activePlusWired = "active+wired"
        /// FreeBSD `sysctl vm.stats.vm`: total − (free + inactive + laundry) pages.
        public static let totalMinusFreeInactiveLaundry = "total-free-inactive-laundry"
    }
}
