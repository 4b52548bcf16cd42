import Foundation
import OrderedJSON

@testable import HostStats

/// Checks that JSON hostscope writes is JSON its own parser reads back, unchanged.
func checkJSONRoundTrip(_ value: JSONValue, _ what: String) {
    let written = JSONWriter().string(value)
    do {
        let reread = try JSONParser.parse(written)
        check(sameJSON(reread, value), "\(what): JSON read back differs from what was written: \(written)")
    } catch {
        check(false, "\(what): wrote JSON its parser refuses (\(error)): \(written)")
    }
}

/// JSON equality as a reader sees it: numbers by value whatever their case, and a figure that is no finite
/// number the same as the `null` the writer prints for it.
func sameJSON(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.double(let x), .null), (.null, .double(let x)): return !x.isFinite
    case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy(sameJSON)
    case (.object(let x), .object(let y)):
        return x.count == y.count
            && zip(x.members, y.members).allSatisfy { $0.key == $1.key && sameJSON($0.value, $1.value) }
    default:
        if let x = number(a), let y = number(b) { return x == y }
        return a == b
    }
}

private func number(_ value: JSONValue) -> Double? {
    switch value {
    case .int(let x): Double(x)
    case .uint(let x): Double(x)
    case .double(let x): x
    default: nil
    }
}

/// Runs `hostscope parse TOOL` on the text and encodes what it yields, as the command does.
func parseTool(_ name: String, _ text: String) {
    guard let parser = ToolParser.named(name) else { fatalError("no parser named \(name)") }
    guard let part = try? parser.parse(text) else { return }
    checkJSONRoundTrip(part.jsonValue, "parse \(name)")
}

/// The kernel files of the proc collector; the first byte picks one (numbered as in build_corpora.py).
let kernelFileTools = [
    "proc-stat", "proc-meminfo", "proc-net-dev", "proc-diskstats", "proc-loadavg", "proc-uptime", "proc-pid-stat",
    "os-release",
]

/// Every other tool parser but df (which has its own harness); the first byte picks one. Scripts/fuzz/
/// build_corpora.py writes seeds with the same numbering.
let toolNames = [
    "mpstat", "free", "ps", "iostat", "top", "uptime", "vm_stat", "sysctl", "sw_vers", "netstat", "ip",
]

extension Harness {
    static let kernelFiles = Harness(name: "kernel-files") { bytes in
        var input = FuzzInput(bytes)
        let tool = kernelFileTools[Int(input.byte()) % kernelFileTools.count]
        parseTool(tool, text(input.rest()))
    }

    static let tools = Harness(name: "tools") { bytes in
        var input = FuzzInput(bytes)
        let tool = toolNames[Int(input.byte()) % toolNames.count]
        parseTool(tool, text(input.rest()))
    }

    /// `parse df` (fixed shapes and the `--output` column reader) and the df sections of both Linux probes.
    static let df = Harness(name: "df") { bytes in
        let dfText = text(bytes)
        parseTool("df", dfText)
        var warnings: [String] = []
        if let disks = try? LinuxProcProbe.parseDfOutput(dfText, warnings: &warnings) {
            checkJSONRoundTrip(.array(disks.map(\.jsonValue)), "probe df")
        }
        if let header = TextScanning.lines(dfText).first {
            _ = DfOutputTable(header: header)?.isClassicShape
        }
    }

    /// The probe output splitter and every probe reader behind it, as the collector calls them; the first byte
    /// picks the reader. Markers carry the nonce `NONCE`, as in Fixtures/probes.
    static let probe = Harness(name: "probe") { bytes in
        var input = FuzzInput(bytes)
        let reader = input.byte() % 6
        let output = ProbeOutput(text(input.rest()), nonce: "NONCE")
        for section in output.sections {
            check(!section.name.contains("\n"), "a section name holds a newline")
            _ = ProbeOutput.files(in: section.text)
        }
        let platform = HostPlatform(os: OSInfo(family: "linux"), hasSysstat: true)
        var snapshot = Snapshot(host: "fuzz", collectedAt: Date(timeIntervalSince1970: 0), collector: "fuzz")
        switch reader {
        case 0:
            _ = try? HostPlatform.parse(ProbeOutput(text(bytes.dropFirst())))
        case 1:
            try? LinuxToolsProbe.build(into: &snapshot, output: output, sampleSeconds: 0.25, topProcesses: 10)
        case 2, 3:
            guard let result = try? LinuxProcProbe.parse(output, platform: platform) else { return }
            let current = result.samples[result.samples.count - 1]
            let previous = reader == 2 ? (result.samples.count > 1 ? result.samples[0] : nil) : current
            LinuxSnapshotBuilder.build(
                into: &snapshot, result: result, previous: previous, current: current, topProcesses: 10)
        case 4:
            guard let result = try? MacProbe.parse(output, sampleSeconds: 0.25) else { return }
            let current = result.samples[result.samples.count - 1]
            let previous = result.samples.count > 1 ? result.samples[0] : nil
            MacSnapshotBuilder.build(
                into: &snapshot, result: result, previous: previous, current: current, topProcesses: 10)
        default:
            _ = try? ProcessDetailsProbe.parse(output, platform: platform)
        }
        snapshot.leaveOutNonFiniteFigures()
        checkJSONRoundTrip(snapshot.jsonValue, "probe snapshot")
    }
}
