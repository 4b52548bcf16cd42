public import AgentTracing
import Foundation
import HostscopeCore
public import Storage
import ValueFormats

/// How `trace list` and `trace show` print spans: for people, one line per span, text from hosts
/// escaped so that it cannot drive the terminal.
public enum TraceText {
    /// The `trace list` table.
    public static func list(_ spans: [StoredSpan], width: Int) -> String {
        let header = ["TIME (UTC)", "SPAN", "NAME", "HOST", "DURATION", "STATUS", "EXIT"]
        var rows: [[String]] = []
        for stored in spans {
            let span = try? stored.finishedSpan()
            let exit: String
            if let code = span?.attributes["process.exit.code"]?.intValue {
                exit = String(code)
            } else if let signal = span?.attributes["hostscope.process.exit.signal"]?.stringValue {
                exit = "SIG" + signal
            } else {
                exit = ""
            }
            rows.append([
                time(UInt64(max(0, stored.startUnixNano))), String(stored.spanID.prefix(12)),
                TerminalText.sanitize(stored.name), TerminalText.sanitize(stored.host ?? ""),
                duration(UInt64(max(0, stored.durationNanoseconds))), status(stored.statusCode), exit,
            ])
        }
        var widths = header.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        // The name and host columns give way when the terminal is narrow.
        let fixed = widths.enumerated().filter { $0.offset != 2 && $0.offset != 3 }.map(\.element).reduce(0, +)
        let room = max(24, width - fixed - 2 * (header.count - 1))
        if widths[2] + widths[3] > room {
            widths[3] = min(widths[3], max(8, room / 3))
            widths[2] = max(10, room - widths[3])
        }
        func line(_ cells: [String]) -> String {
            var parts: [String] = []
            for (index, cell) in cells.enumerated() {
                let text = TerminalText.truncate(cell, to: widths[index])
                let padded = index == 4 ? pad(text, widths[index], right: true) : pad(text, widths[index], right: false)
                parts.append(padded)
            }
            return String(parts.joined(separator: "  ").reversed().drop(while: { $0 == " " }).reversed())
        }
        return ([line(header)] + rows.map(line)).joined(separator: "\n") + "\n"
    }

    /// The `trace show` output: the tree, then the span in full, then failed spans below it in full.
    public static func show(_ tree: TraceTree, traceSize: Int) -> String {
        var out = "trace \(tree.focus.span.traceID.hex) (\(traceSize) span(s) stored)\n"
        if let missing = tree.missingAncestorID {
            out += "  (parent \(missing.hex) is not stored)\n"
        }
        for line in tree.lines {
            let span = line.span
            let marker = line.isFocus ? "▶ " : "  "
            var text = String(repeating: "  ", count: line.depth) + marker + TerminalText.sanitize(span.name)
            text += "  " + span.spanID.hex
            text += "  " + duration(span.durationNanoseconds)
            text += "  " + status(span.status)
            if let code = span.attributes["process.exit.code"]?.intValue { text += "  exit \(code)" }
            if let host = span.attributes["hostscope.host"]?.stringValue, line.depth == 0 || line.isFocus {
                text += "  " + TerminalText.sanitize(host)
            }
            out += text + "\n"
        }
        out += "\n" + details(tree.focus.span)
        var failed: [FinishedSpan] = []
        func collect(_ node: TraceTree.Node) {
            for child in node.children {
                if child.span.status.code == .error { failed.append(child.span) }
                collect(child)
            }
        }
        collect(tree.focus)
        for span in failed {
            out += "\n" + details(span)
        }
        return out
    }

    /// One span in full: ids, times, status, resource, every attribute and event.
    public static func details(_ span: FinishedSpan) -> String {
        var out = "span \(span.spanID.hex)  \(TerminalText.sanitize(span.name))\n"
        out += "  trace      \(span.traceID.hex)\n"
        out += "  parent     \(span.parentSpanID?.hex ?? "(root)")\n"
        out += "  kind       \(span.kind.name)\n"
        out += "  start      \(RFC3339.format(nanosecondsSince1970: span.startNanoseconds))\n"
        out += "  end        \(RFC3339.format(nanosecondsSince1970: span.endNanoseconds))\n"
        out += "  duration   \(duration(span.durationNanoseconds))\n"
        out += "  status     \(status(span.status))"
        if let message = span.status.message { out += ": " + TerminalText.sanitize(message) }
        out += "\n"
        let resource = span.resource.attributes.map { "\($0.key)=\(TerminalText.sanitize($0.value.displayText))" }
        out += "  resource   \(resource.joined(separator: " "))\n"
        if !span.attributes.isEmpty {
            out += "  attributes\n"
            for attribute in span.attributes {
                out += value(attribute, indent: "    ")
            }
        }
        if span.droppedAttributeCount > 0 { out += "  (\(span.droppedAttributeCount) attribute(s) dropped)\n" }
        if !span.events.isEmpty {
            out += "  events\n"
            for event in span.events {
                out +=
                    "    \(RFC3339.format(nanosecondsSince1970: event.timeNanoseconds))  \(TerminalText.sanitize(event.name))\n"
                for attribute in event.attributes {
                    out += value(attribute, indent: "      ")
                }
            }
        }
        if span.droppedEventCount > 0 { out += "  (\(span.droppedEventCount) event(s) dropped)\n" }
        for link in span.links {
            out += "  link       trace \(link.traceID.hex) span \(link.spanID.hex)\n"
        }
        return out
    }

    /// An attribute on one line, or a string array one element per line (stderr lines, arguments).
    private static func value(_ attribute: Attribute, indent: String) -> String {
        switch attribute.value {
        case .stringArray(let lines) where lines.count > 1 || lines.contains(where: { $0.contains("\n") }):
            var out = "\(indent)\(attribute.key):\n"
            for line in lines {
                for part in line.split(separator: "\n", omittingEmptySubsequences: false) {
                    out += "\(indent)  \(TerminalText.sanitize(String(part)))\n"
                }
            }
            return out
        case .string(let text) where text.contains("\n"):
            var out = "\(indent)\(attribute.key):\n"
            for part in text.split(separator: "\n", omittingEmptySubsequences: false) {
                out += "\(indent)  \(TerminalText.sanitize(String(part)))\n"
            }
            return out
        default:
            return "\(indent)\(attribute.key) = \(TerminalText.sanitize(attribute.value.displayText))\n"
        }
    }

    static func time(_ nanoseconds: UInt64) -> String {
        TimeText.utc(RFC3339.format(nanosecondsSince1970: nanoseconds, precision: .milliseconds))
    }

    static func duration(_ nanoseconds: UInt64) -> String {
        let milliseconds = Double(nanoseconds) / 1e6
        if milliseconds < 1 { return String(format: "%.3f ms", milliseconds) }
        if milliseconds < 1000 { return String(format: "%.1f ms", milliseconds) }
        return String(format: "%.2f s", milliseconds / 1000)
    }

    static func status(_ code: SpanStatusCode) -> String {
        switch code {
        case .unset: "-"
        case .ok: "ok"
        case .error: "error"
        }
    }

    static func status(_ status: FinishedSpan.Status) -> String {
        switch status.code {
        case .unset: "-"
        case .ok: "ok"
        case .error: "error"
        }
    }

    private static func pad(_ text: String, _ width: Int, right: Bool) -> String {
        let padding = String(repeating: " ", count: max(0, width - text.count))
        return right ? padding + text : text + padding
    }
}
