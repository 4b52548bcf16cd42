import Foundation

/// One script's trip through a long-lived `sh`, as a value type: the text written to the
/// shell's standard input, and the scan of both output streams for the end lines that follow
/// the script's output.
///
/// The script runs as a brace group with its standard input from `/dev/null` (so it cannot eat
/// the next script), then the shell prints, on stdout, a newline, a marker and the group's exit
/// status, and on stderr a newline and the marker. The marker carries a nonce chosen per
/// script, so output from the host cannot end a script early. The leading newline makes the
/// marker start a line whatever the script printed last; it is not part of the output.
struct ShellRequestFraming {
    enum Stream {
        case stdout
        case stderr
    }

    /// `hostscope:end:<nonce>`.
    let marker: [UInt8]
    let outputLimit: Int
    private(set) var stdout: [UInt8] = []
    private(set) var stderr: [UInt8] = []
    private(set) var exitStatus: Int32?
    private(set) var stdoutEnded = false
    private(set) var stderrEnded = false
    /// Output past the limit arrived; what fits was kept, and the shell must be ended.
    private(set) var truncated = false
    /// Bytes the script wrote to each stream, counting any dropped past the limit.
    private(set) var stdoutBytes = 0
    private(set) var stderrBytes = 0

    /// An end line is short; this much beyond the limit is held while looking for one.
    private static let markerSlack = 96

    init(nonce: String, outputLimit: Int) {
        self.marker = Array("hostscope:end:\(nonce)".utf8)
        self.outputLimit = outputLimit
    }

    /// The bytes to write to the shell for `script`.
    func input(for script: String) -> [UInt8] {
        let marker = String(decoding: self.marker, as: UTF8.self)
        let text = "{ \(script)\n} </dev/null; printf '\\n%s %s\\n' \(marker) \"$?\"; printf '\\n%s\\n' \(marker) >&2\n"
        return Array(text.utf8)
    }

    /// Both end lines have arrived, or the output outgrew the limit.
    var isFinished: Bool { (stdoutEnded && stderrEnded) || truncated }

    mutating func received(_ bytes: UnsafeBufferPointer<UInt8>, on stream: Stream) {
        guard !isFinished, !bytes.isEmpty else { return }
        switch stream {
        case .stdout:
            guard !stdoutEnded else { return }
            let searchFrom = max(0, stdout.count - marker.count - 16)
            stdout.append(contentsOf: bytes)
            if let (end, status) = findEnd(in: stdout, from: searchFrom, withStatus: true) {
                stdout.removeSubrange(end...)
                exitStatus = status
                stdoutEnded = true
            }
        case .stderr:
            guard !stderrEnded else { return }
            let searchFrom = max(0, stderr.count - marker.count - 2)
            stderr.append(contentsOf: bytes)
            if let (end, _) = findEnd(in: stderr, from: searchFrom, withStatus: false) {
                stderr.removeSubrange(end...)
                stderrEnded = true
            }
        }
        stdoutBytes = stdout.count
        stderrBytes = stderr.count
        if stdout.count + stderr.count > outputLimit + Self.markerSlack {
            // Keep the limit's worth, stdout first, as an exec channel would have.
            truncated = true
            if stdout.count > outputLimit { stdout.removeSubrange(outputLimit...) }
            let room = max(0, outputLimit - stdout.count)
            if stderr.count > room { stderr.removeSubrange(room...) }
        }
    }

    /// The offset of the newline that starts a complete end line, with the status it names.
    private func findEnd(in buffer: [UInt8], from start: Int, withStatus: Bool) -> (Int, Int32?)? {
        buffer.withUnsafeBufferPointer { bytes -> (Int, Int32?)? in
            guard let base = bytes.baseAddress else { return nil }
            let newline = UInt8(ascii: "\n")
            var index = start
            while index + marker.count + 1 < bytes.count {
                guard let found = memchr(base + index, Int32(newline), bytes.count - index) else { return nil }
                index = UnsafeRawPointer(found) - UnsafeRawPointer(base)
                let after = index + 1 + marker.count
                guard after < bytes.count, memcmp(base + index + 1, marker, marker.count) == 0 else {
                    index += 1
                    continue
                }
                if !withStatus {
                    if bytes[after] == newline { return (index, nil) }
                } else if bytes[after] == UInt8(ascii: " ") {
                    // `<marker> <status>\n`; wait for the newline before reading the status.
                    guard let lineEnd = memchr(base + after + 1, Int32(newline), bytes.count - after - 1) else {
                        return nil
                    }
                    let length = UnsafeRawPointer(lineEnd) - UnsafeRawPointer(base + after + 1)
                    let status = Int32(
                        String(decoding: UnsafeBufferPointer(start: base + after + 1, count: length), as: UTF8.self))
                    return (index, status)
                }
                index += 1
            }
            return nil
        }
    }
}
