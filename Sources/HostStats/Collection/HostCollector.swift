public import Foundation
import ValueFormats

/// Which probe a collector runs.
public enum CollectorKind: String, Sendable, CaseIterable {
    /// The best probe for the platform: `proc` on Linux, `busybox` on BusyBox, `macos` on macOS.
    case auto
    /// Kernel files read by one script: cheapest and most exact.
    case proc
    /// The classic tools (`mpstat`, `free`, `df`, `ps`), as a person would run them.
    case tools
}

/// How a collector samples.
public struct CollectorOptions: Sendable, Equatable {
    public var kind: CollectorKind
    /// The CPU sampling window of a one-off snapshot.
    public var sample: Duration
    /// How many processes to report.
    public var topProcesses: Int
    /// Bound on each command run on the host, sampling window included.
    public var commandTimeout: Duration
    /// The directory of the host whose `*.prom` files are passed on (node_exporter's
    /// `--collector.textfile.directory`); read by `watch` and `serve` ticks of the `proc` and `busybox`
    /// collectors.
    public var textfileDirectory = LinuxProcProbe.textfileDirectory

    public init(
        kind: CollectorKind = .auto, sample: Duration = .milliseconds(250), topProcesses: Int = 10,
        commandTimeout: Duration = .seconds(30)
    ) {
        self.kind = kind
        self.sample = sample
        self.topProcesses = topProcesses
        self.commandTimeout = commandTimeout
    }

    var sampleSeconds: Double {
        sample.inSeconds
    }
}

/// A failure a ``CommandRunner`` reports, already classified for the error record.
public struct CollectionError: Error, Sendable, Equatable, CustomStringConvertible {
    public var kind: FailureKind
    public var message: String

    public init(_ kind: FailureKind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}

/// The probe a ``HostCollector`` runs; the raw value is the snapshot's `collector` field.
public enum CollectorRoute: String, Sendable, CaseIterable {
    /// Linux kernel files, GNU userland.
    case proc
    /// Linux classic tools (mpstat, free, df, ps).
    case tools
    /// Linux kernel files read with BusyBox applets.
    case busybox
    /// macOS tools (top, vm_stat, sysctl, netstat, df, ps).
    case macos
}

/// Collects snapshots of one host through a ``CommandRunner``: detects the platform once,
/// then runs the chosen probe. Every call produces one record — a snapshot or a failure.
public actor HostCollector {
    public let host: String
    private let runner: any CommandRunner
    private let options: CollectorOptions
    private let now: @Sendable () -> Date
    private var platform: HostPlatform?
    /// The previous tick's counters, for `watch`'s deltas.
    private var previousSample: LinuxCounterSample?
    /// The last `adjtimex` read and when, carried into the ticks between reads.
    private var lastTimex: (read: Date, value: KernelTimex)?
    /// Command lines and owners learnt on earlier ticks, by pid, with the process's start time.
    private var knownDetails: [Int: (start: UInt64, details: ProcessDetailsProbe.Details)] = [:]
    private var previousMacSample: MacCounterSample?
    /// The probe shell's pid of the last two ticks, newest last: equal, the ticks run in one long-lived shell.
    private var shellPIDs: (earlier: Int?, last: Int?) = (nil, nil)
    /// The shell whose ``LinuxProcProbe/readerAwk`` takes the ticks, once started.
    private var readerShell: Int?

    public init(
        host: String, runner: any CommandRunner, options: CollectorOptions = CollectorOptions(),
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.host = host
        self.runner = runner
        self.options = options
        self.now = now
    }

    /// A one-off snapshot: CPU and rates measured over `options.sample` inside one command.
    public func snapshot() async -> SnapshotRecord {
        await collect(sampled: true)
    }

    /// One tick of a series: a single read, with CPU and rates from the previous tick's
    /// counters (`nil` on the first tick).
    public func tick() async -> SnapshotRecord {
        await collect(sampled: false)
    }

    /// Forgets the platform and previous counters, e.g. after a reconnect to a host that may
    /// have been rebuilt.
    public func reset() {
        platform = nil
        previousSample = nil
        previousMacSample = nil
        shellPIDs = (nil, nil)
        readerShell = nil
    }

    /// The probe that runs for a requested collector kind on a detected platform; its raw value
    /// is the snapshot's `collector`.
    ///
    /// - Linux: `auto` and `proc` read kernel files; `tools` runs mpstat, free, df and ps.
    /// - BusyBox (`ps` is BusyBox): `auto` and `proc` run the same kernel reads with commands
    ///   every BusyBox build has (`busybox`); so does `tools`, because BusyBox `ps` has no CPU
    ///   or memory-share column and there is no mpstat.
    /// - macOS: one collector (`macos`) whatever was asked, as there is no /proc and its tools
    ///   are the only source.
    /// - Anything else (FreeBSD, Solaris…) is refused with a sentence saying so.
    public static func route(_ kind: CollectorKind, platform: HostPlatform, host: String) throws(CollectionError)
        -> CollectorRoute
    {
        switch platform.os.family {
        case "linux":
            if platform.isBusyBox { return .busybox }
            return kind == .tools ? .tools : .proc
        case "darwin":
            return .macos
        default:
            throw CollectionError(
                .command,
                "\(host): \(platform.os.name ?? platform.os.family) hosts are not supported; hostscope reads Linux "
                    + "(GNU or BusyBox userland) and macOS hosts")
        }
    }

    private func collect(sampled: Bool) async -> SnapshotRecord {
        let collectedAt = now()
        let clock = ContinuousClock.now
        do {
            let platform = try await detectPlatform()
            var snapshot = Snapshot(host: host, collectedAt: collectedAt, collector: "proc", os: platform.os)
            let route = try Self.route(options.kind, platform: platform, host: host)
            snapshot.collector = route.rawValue
            switch route {
            case .tools:
                let nonce = ProbeOutput.makeNonce()
                let output = try await run(LinuxToolsProbe.command(sampleSeconds: options.sampleSeconds, nonce: nonce))
                try LinuxToolsProbe.build(
                    into: &snapshot, output: ProbeOutput(bytes: output.stdout, nonce: nonce),
                    sampleSeconds: options.sampleSeconds, topProcesses: options.topProcesses)
                appendStderr(output, to: &snapshot)
            case .proc, .busybox:
                let nonce = ProbeOutput.makeNonce()
                let seconds = sampled ? options.sampleSeconds : nil
                // Command lines and owners are asked for afterwards, for the processes listed only
                // (``withProcessDetails``): on a host with a thousand processes, reading every one's
                // made most of the probe's output and a third of its work on the host.
                let timexSyscall =
                    timexDue(at: collectedAt) ? LinuxProcProbe.adjtimexSyscall(arch: platform.os.arch) : nil
                // A tick whose last two ran in one shell starts the connection's reader there; the ticks
                // after it go through that reader, so that the host starts no awk per tick.
                let sameShell = shellPIDs.last != nil && shellPIDs.earlier == shellPIDs.last
                let command =
                    route == .busybox
                    ? BusyBoxProbe.command(
                        sampleSeconds: seconds, nonce: nonce, processDetails: false,
                        textfileDirectory: options.textfileDirectory)
                    : LinuxProcProbe.command(
                        sampleSeconds: seconds, nonce: nonce, processDetails: false, timexSyscall: timexSyscall,
                        textfileDirectory: options.textfileDirectory,
                        startReaderIn: !sampled && sameShell && readerShell == nil ? shellPIDs.last : nil)
                var sent = now()
                var output: CommandOutput
                var probeOutput: ProbeOutput
                if route == .proc, !sampled, let reader = readerShell, reader == shellPIDs.last {
                    output = try await run(
                        LinuxProcProbe.readerCommand(
                            nonce: nonce, timexSyscall: timexSyscall, textfileDirectory: options.textfileDirectory))
                    probeOutput = ProbeOutput(bytes: output.stdout, nonce: nonce)
                    if probeOutput.section("noreader") != nil {
                        // A new shell, or a reader that ended: this tick is taken whole, and the next ones
                        // start a reader again once two of them have run in one shell.
                        readerShell = nil
                        sent = now()
                        output = try await run(command)
                        probeOutput = ProbeOutput(bytes: output.stdout, nonce: nonce)
                    }
                } else {
                    output = try await run(command)
                    probeOutput = ProbeOutput(bytes: output.stdout, nonce: nonce)
                }
                let received = now()
                var result = try LinuxProcProbe.parse(probeOutput, platform: platform)
                if !sampled {
                    shellPIDs = (shellPIDs.last, result.probePID)
                    if probeOutput.section("reader") != nil {
                        readerShell = result.probePID
                    } else if readerShell != result.probePID {
                        readerShell = nil
                    }
                }
                if let timex = result.node?.timex {
                    lastTimex = (collectedAt, timex)
                } else if let last = lastTimex {
                    result.node?.timex = last.value
                }
                result.node?.withConnectionFigures(
                    platform.networkClass, sent: sent, received: received, waited: seconds ?? 0)
                var current = result.samples[result.samples.count - 1]
                let previous = sampled ? (result.samples.count > 1 ? result.samples[0] : nil) : previousSample
                LinuxSnapshotBuilder.build(
                    into: &snapshot, result: result, previous: previous, current: current,
                    topProcesses: options.topProcesses)
                current.keepForNextSample()
                if !sampled { previousSample = current }
                snapshot.processes = await withProcessDetails(
                    snapshot.processes, ticks: current.tickTable, platform: platform)
                appendStderr(output, to: &snapshot)
            case .macos:
                let nonce = ProbeOutput.makeNonce()
                let output = try await run(
                    MacProbe.command(sampleSeconds: options.sampleSeconds, sampled: sampled, nonce: nonce))
                let result = try MacProbe.parse(
                    ProbeOutput(bytes: output.stdout, nonce: nonce), sampleSeconds: options.sampleSeconds)
                let current = result.samples[result.samples.count - 1]
                let previous = sampled ? (result.samples.count > 1 ? result.samples[0] : nil) : previousMacSample
                MacSnapshotBuilder.build(
                    into: &snapshot, result: result, previous: previous, current: current,
                    topProcesses: options.topProcesses)
                if !sampled { previousMacSample = current }
                appendStderr(output, to: &snapshot)
            }
            snapshot.durationMs = clock.duration(to: .now).inMilliseconds
            snapshot.leaveOutNonFiniteFigures()
            return .snapshot(snapshot)
        } catch let error as CollectionError {
            return .failure(
                CollectionFailure(host: host, collectedAt: collectedAt, kind: error.kind, message: error.message))
        } catch let error as ParseError {
            return .failure(
                CollectionFailure(
                    host: host, collectedAt: collectedAt, kind: .parse,
                    message: "\(host): could not read the host's output: \(error.description)"))
        } catch is CancellationError {
            return .failure(
                CollectionFailure(host: host, collectedAt: collectedAt, kind: .timeout, message: "\(host): cancelled"))
        } catch {
            return .failure(
                CollectionFailure(host: host, collectedAt: collectedAt, kind: .command, message: "\(host): \(error)"))
        }
    }

    /// Whether this tick reads `adjtimex` (``LinuxProcProbe/timexInterval``).
    private func timexDue(at time: Date) -> Bool {
        guard let last = lastTimex else { return true }
        return time.timeIntervalSince(last.read) >= LinuxProcProbe.timexInterval
    }

    /// Fills in the command line and owner of `processes` (the list of a tick or of a one-off
    /// snapshot), from the details of earlier ticks where the pid still has the same start time, else
    /// by asking the host. A
    /// failure to ask leaves the rows as they are (`[comm]`, no user): the snapshot stands.
    private func withProcessDetails(_ processes: [ProcessStats], ticks: ProcessTickTable, platform: HostPlatform)
        async -> [ProcessStats]
    {
        knownDetails = knownDetails.filter { ticks.ticks(of: $0.key)?.startTimeTicks == $0.value.start }
        let missing = processes.map(\.pid).filter { knownDetails[$0] == nil }
        if !missing.isEmpty {
            let nonce = ProbeOutput.makeNonce()
            if let output = try? await run(
                ProcessDetailsProbe.command(pids: missing, nonce: nonce, lsTakesN: !platform.isBusyBox)),
                let details = try? ProcessDetailsProbe.parse(
                    ProbeOutput(bytes: output.stdout, nonce: nonce), platform: platform)
            {
                for (pid, detail) in details {
                    if let start = ticks.ticks(of: pid)?.startTimeTicks { knownDetails[pid] = (start, detail) }
                }
            }
        }
        return processes.map { process in
            guard let known = knownDetails[process.pid]?.details else { return process }
            var process = process
            if let command = known.command { process.command = command }
            process.user = known.user
            return process
        }
    }

    private func detectPlatform() async throws -> HostPlatform {
        if let platform { return platform }
        let output = try await run(HostPlatform.detectionCommand)
        let detected = try HostPlatform.parse(ProbeOutput(bytes: output.stdout))
        platform = detected
        return detected
    }

    private func run(_ command: String) async throws -> CommandOutput {
        let output = try await runner.runProbe(command, timeout: options.commandTimeout)
        if output.truncated {
            throw CollectionError(
                .command, "\(host): the probe printed more than the output limit; the host's process list may be huge")
        }
        if let signal = output.exitSignal {
            throw CollectionError(.command, "\(host): the probe was killed by signal \(signal)")
        }
        return output
    }

    /// Error lines of the probe's commands (a `df` that could not stat a mount) become
    /// warnings; they do not void the figures that were read.
    private func appendStderr(_ output: CommandOutput, to snapshot: inout Snapshot) {
        for line in output.stderrText.split(separator: "\n").prefix(10) where !line.isEmpty {
            snapshot.warnings.append(String(line))
        }
    }
}
