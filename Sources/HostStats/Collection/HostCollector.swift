import Foundation

/// Which probe a collector runs.
public enum CollectorKind: String, Sendable, CaseIterable {
    /// The best probe for the platform (`proc` on Linux).
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
        Double(sample.components.seconds) + Double(sample.components.attoseconds) / 1e18
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
    }

    private func collect(sampled: Bool) async -> SnapshotRecord {
        let collectedAt = now()
        let clock = ContinuousClock.now
        do {
            let platform = try await detectPlatform()
            var snapshot = Snapshot(host: host, collectedAt: collectedAt, collector: "proc", os: platform.os)
            guard platform.os.family == "linux" else {
                throw CollectionError(
                    .command,
                    "\(host): \(platform.os.name ?? platform.os.family) hosts are not supported by this collector yet; hostscope reads Linux hosts")
            }
            let kind = options.kind == .auto ? CollectorKind.proc : options.kind
            switch kind {
            case .tools:
                snapshot.collector = "tools"
                let nonce = ProbeOutput.makeNonce()
                let output = try await run(LinuxToolsProbe.command(sampleSeconds: options.sampleSeconds, nonce: nonce))
                try LinuxToolsProbe.build(
                    into: &snapshot, output: ProbeOutput(output.stdoutText, nonce: nonce),
                    sampleSeconds: options.sampleSeconds, topProcesses: options.topProcesses)
                appendStderr(output, to: &snapshot)
            case .proc, .auto:
                let nonce = ProbeOutput.makeNonce()
                let output = try await run(
                    LinuxProcProbe.command(sampleSeconds: sampled ? options.sampleSeconds : nil, nonce: nonce))
                let result = try LinuxProcProbe.parse(ProbeOutput(output.stdoutText, nonce: nonce), platform: platform)
                let current = result.samples[result.samples.count - 1]
                let previous = sampled ? (result.samples.count > 1 ? result.samples[0] : nil) : previousSample
                LinuxSnapshotBuilder.build(
                    into: &snapshot, result: result, previous: previous, current: current,
                    topProcesses: options.topProcesses)
                if !sampled { previousSample = current }
                appendStderr(output, to: &snapshot)
            }
            let elapsed = clock.duration(to: .now).components
            snapshot.durationMs = Double(elapsed.seconds) * 1000 + Double(elapsed.attoseconds) / 1e15
            return .snapshot(snapshot)
        } catch let error as CollectionError {
            return .failure(CollectionFailure(host: host, collectedAt: collectedAt, kind: error.kind, message: error.message))
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

    private func detectPlatform() async throws -> HostPlatform {
        if let platform { return platform }
        let output = try await run(HostPlatform.detectionCommand)
        let detected = try HostPlatform.parse(ProbeOutput(output.stdoutText))
        platform = detected
        return detected
    }

    private func run(_ command: String) async throws -> CommandOutput {
        let output = try await runner.run(command, timeout: options.commandTimeout)
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
