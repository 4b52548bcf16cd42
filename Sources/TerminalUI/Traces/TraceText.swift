public import AgentTracing
import Foundation
public import HostscopeCore
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
        let line = columns(header, rows, width: width, rightAligned: [4])
        return ([line(header)] + rows.map(line)).joined(separator: "\n") + "\n"
    }

    /// How a row of the `trace list` tables is laid out: every column as wide as its widest cell, except the
    /// name and host (columns 2 and 3), which give way when the terminal is narrow; cells two spaces apart,
    /// no trailing blanks.
    private static func columns(_ header: [String], _ rows: [[String]], width: Int, rightAligned: Set<Int>)
        -> ([String]) -> String
    {
        var widths = header.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        let fixed = widths.enumerated().filter { $0.offset != 2 && $0.offset != 3 }.map(\.element).reduce(0, +)
        let room = max(24, width - fixed - 2 * (header.count - 1))
        if widths[2] + widths[3] > room {
            widths[3] = min(widths[3], max(header[3].count, room / 3))
            widths[2] = max(header[2].count, room - widths[3])
        }
        let finalWidths = widths
        return { cells in
            let line = cells.enumerated().map { index, cell in
                TerminalText.padded(
                    TerminalText.truncate(cell, to: finalWidths[index]), to: finalWidths[index],
                    right: rightAligned.contains(index))
            }.joined(separator: "  ")
            return String(line.reversed().drop(while: { $0 == " " }).reversed())
        }
    }

    /// The `trace list` table of traces: start, trace id (enough digits for `trace show`), root span, host,
    /// duration and span count, and below a failed trace's row, the error that explains it.
    public static func traces(_ traces: [TraceOverview], width: Int) -> String {
        let header = ["START (UTC)", "TRACE", "ROOT SPAN", "HOST", "DURATION", "SPANS"]
        var rows: [[String]] = []
        var errors: [String?] = []
        for trace in traces {
            let root = trace.root
            rows.append([
                TimeText.utc(RFC3339.format(nanosecondsSince1970: trace.startNanoseconds, precision: .seconds)),
                String(trace.traceID.hex.prefix(12)),
                (trace.rootIsPartial ? "… " : "") + TerminalText.sanitize(root.name),
                TerminalText.sanitize(SpanCategory.host(of: root) ?? ""), duration(trace.durationNanoseconds),
                String(trace.spanCount),
            ])
            errors.append(
                trace.error.map { failed in
                    var text = "  error"
                    if trace.errorCount > 1 { text += " (\(trace.errorCount) spans)" }
                    text += ": " + TerminalText.sanitize(failed.name)
                    if let message = failed.status.message, !message.isEmpty {
                        text += ": " + TerminalText.sanitize(message)
                    }
                    return TerminalText.truncate(text, to: width)
                })
        }
        let line = columns(header, rows, width: width, rightAligned: [4, 5])
        var out = line(header) + "\n"
        for (row, error) in zip(rows, errors) {
            out += line(row) + "\n"
            if let error { out += error + "\n" }
        }
        return out
    }

    /// `trace show TRACE_ID`: a line about the trace, its spans as a waterfall nested by parent, then every
    /// failed span in full.
    public static func show(_ trace: WholeTrace, width: Int) -> String {
        let summary = trace.summary
        var out = "trace \(summary.traceID.hex)\n"
        var about = [TerminalText.sanitize(summary.root.name)]
        if let host = SpanCategory.host(of: summary.root) { about.append(TerminalText.sanitize(host)) }
        about.append(
            "started "
                + TimeText.utc(RFC3339.format(nanosecondsSince1970: summary.startNanoseconds, precision: .milliseconds))
                + " UTC")
        about.append(duration(summary.durationNanoseconds))
        about.append("\(summary.spanCount) span\(summary.spanCount == 1 ? "" : "s")")
        if summary.errorCount > 0 { about.append("\(summary.errorCount) failed") }
        if summary.rootIsPartial, let parent = summary.root.parentSpanID {
            about.append("its root \(parent.hex) is not stored")
        }
        out += TerminalText.wrapped(about, width: width, indent: "  ").joined(separator: "\n") + "\n\n"
        out +=
            waterfall(
                TraceTree.lines(of: trace.forest), start: summary.startNanoseconds, end: summary.endNanoseconds,
                width: width
            ).joined(separator: "\n") + "\n"
        var failed: [FinishedSpan] = []
        func collect(_ node: TraceTree.Node) {
            if node.span.status.code == .error { failed.append(node.span) }
            node.children.forEach(collect)
        }
        trace.forest.forEach(collect)
        for span in failed { out += "\n" + details(span) }
        return out
    }

    /// `trace show SPAN_ID`: the span's ancestors and descendants as a waterfall measured from the trace's
    /// start, then the span in full, then failed spans below it in full.
    public static func show(_ found: SpanInTrace, width: Int) -> String {
        show(
            found.tree, traceSize: found.traceSize, width: width,
            extent: found.traceEndNanoseconds > 0 ? (found.traceStartNanoseconds, found.traceEndNanoseconds) : nil)
    }

    /// The `trace show` output for a span's tree: the waterfall of its ancestors and descendants, the span in
    /// full, then failed spans below it in full. Offsets are measured from the earliest span shown unless
    /// `extent` gives the trace's start and end.
    public static func show(
        _ tree: TraceTree, traceSize: Int, width: Int = Output.terminalWidth, extent: (UInt64, UInt64)? = nil
    ) -> String {
        var out = "trace \(tree.focus.span.traceID.hex) (\(traceSize) span(s) stored)\n"
        if let missing = tree.missingAncestorID {
            out += "  (parent \(missing.hex) is not stored)\n"
        }
        let lines = tree.lines
        let start = extent?.0 ?? lines.map(\.span.startNanoseconds).min() ?? 0
        let end = extent?.1 ?? lines.map(\.span.endNanoseconds).max() ?? start
        out += "\n" + waterfall(lines, start: start, end: end, width: width).joined(separator: "\n") + "\n"
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

    /// Rows of spans, each with its id, name indented by depth (`▶` marks the span asked for), offset from
    /// `start`, duration, status and a bar placing it in [`start`, `end`], scaled to what `width` leaves.
    static func waterfall(_ lines: [TraceTree.Line], start: UInt64, end: UInt64, width: Int) -> [String] {
        let total = max(end, start + 1) - start
        let names = lines.map { line in
            String(repeating: "  ", count: line.depth) + (line.isFocus ? "▶ " : "")
                + TerminalText.sanitize(line.span.name)
        }
        let offsets = lines.map { "+" + duration(max(start, $0.span.startNanoseconds) - start) }
        let durations = lines.map { duration($0.span.durationNanoseconds) }
        // A command's outcome says more than its status: `exit 0`, `exit 2`, `SIGKILL`.
        let statuses = lines.map { line in
            if let code = line.span.attributes["process.exit.code"]?.intValue { return "exit \(code)" }
            if let signal = line.span.attributes["hostscope.process.exit.signal"]?.stringValue { return "SIG" + signal }
            return status(line.span.status)
        }
        // As many digits as `trace list --spans` shows: enough for `trace show` in a database of millions.
        let idWidth = 12
        let offsetWidth = max("OFFSET".count, offsets.map(\.count).max() ?? 0)
        let durationWidth = max("DURATION".count, durations.map(\.count).max() ?? 0)
        let statusWidth = max("STATUS".count, statuses.map(\.count).max() ?? 0)
        let fixed = idWidth + offsetWidth + durationWidth + statusWidth + 2 * 5
        // The bar takes two fifths of what is left (at least 10 columns), the names the rest, up to their length.
        let left = max(20, width - fixed)
        let longest = max("NAME".count, names.map(\.count).max() ?? 0)
        var barWidth = max(10, left * 2 / 5)
        let nameWidth = min(longest, max(4, left - barWidth))
        barWidth = max(10, left - nameWidth)

        func bar(_ span: FinishedSpan) -> String {
            let from = Double(max(start, span.startNanoseconds) - start) / Double(total)
            let to = Double(max(start, span.endNanoseconds) - start) / Double(total)
            let first = min(barWidth - 1, max(0, Int((from * Double(barWidth)).rounded(.down))))
            let last = min(barWidth, max(first + 1, Int((to * Double(barWidth)).rounded(.up))))
            return String(repeating: " ", count: first) + String(repeating: "█", count: last - first)
        }
        let scale = "0 … " + duration(total)
        let header = [
            TerminalText.padded("SPAN", to: idWidth), TerminalText.padded("NAME", to: nameWidth),
            TerminalText.padded("OFFSET", to: offsetWidth, right: true),
            TerminalText.padded("DURATION", to: durationWidth, right: true),
            TerminalText.padded("STATUS", to: statusWidth),
            scale.count <= barWidth ? TerminalText.padded(scale, to: barWidth, right: true) : "TIMELINE",
        ]
        var rows = [header.joined(separator: "  ")]
        for (index, line) in lines.enumerated() {
            rows.append(
                [
                    String(line.span.spanID.hex.prefix(idWidth)),
                    TerminalText.padded(TerminalText.truncate(names[index], to: nameWidth), to: nameWidth),
                    TerminalText.padded(offsets[index], to: offsetWidth, right: true),
                    TerminalText.padded(durations[index], to: durationWidth, right: true),
                    TerminalText.padded(statuses[index], to: statusWidth), bar(line.span),
                ].joined(separator: "  "))
        }
        return rows.map { String($0.reversed().drop(while: { $0 == " " }).reversed()) }
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
}
