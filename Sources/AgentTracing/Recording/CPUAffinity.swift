import CTracingLinux

/// Binding the calling thread to a CPU, for tests and benchmarks that choose which CPU's ring of the
/// span store a span goes to.
package enum CPUAffinity {
    /// Binds the calling thread to `cpu`; `false` where the system refuses or lacks CPU affinity.
    package static func pinCurrentThread(to cpu: Int) -> Bool {
        c_tracing_pin_to_cpu(Int32(clamping: cpu)) == 0
    }

    /// The CPU the calling thread runs on, or `nil` where that is unknown.
    package static var currentCPU: Int? {
        let cpu = c_tracing_current_cpu()
        return cpu >= 0 ? Int(cpu) : nil
    }
}
