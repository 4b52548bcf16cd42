/// One line of a full-screen view: runs of text, each in at most one style, measured in columns so that
/// the view can fit it to the terminal's width before any control sequence is added.
struct StyledLine: Sendable, Equatable {
    struct Run: Sendable, Equatable {
        var text: String
        var style: TerminalOutput.Style?
    }

    private(set) var runs: [Run] = []

    init() {}

    init(_ text: String, _ style: TerminalOutput.Style? = nil) {
        add(text, style)
    }

    /// Columns the line takes (every character one column; host text is escaped first).
    var width: Int { runs.reduce(0) { $0 + $1.text.count } }

    /// The text without styles, as a terminal without colour shows it.
    var plain: String { runs.map(\.text).joined() }

    mutating func add(_ text: String, _ style: TerminalOutput.Style? = nil) {
        guard !text.isEmpty else { return }
        runs.append(Run(text: TerminalText.sanitize(text), style: style))
    }

    /// `text` left-aligned in `width` columns (cut with an ellipsis when longer), then one space.
    mutating func column(_ text: String, _ width: Int, _ style: TerminalOutput.Style? = nil, right: Bool = false) {
        let cut = TerminalText.truncate(TerminalText.sanitize(text), to: width)
        let pad = String(repeating: " ", count: max(0, width - cut.count))
        add(right ? pad + cut : cut + pad, style)
        add(" ")
    }

    /// The line cut to `width` columns and padded with spaces to exactly that width.
    func fitted(to width: Int) -> StyledLine {
        var result = StyledLine()
        var left = width
        for run in runs where left > 0 {
            let text = run.text.count > left ? String(run.text.prefix(left)) : run.text
            result.runs.append(Run(text: text, style: run.style))
            left -= text.count
        }
        if left > 0 { result.runs.append(Run(text: String(repeating: " ", count: left), style: nil)) }
        return result
    }

    /// The line for the terminal: styled when `colours` is on, else plain text. `highlighted` shows it
    /// reversed (the selected row), which a terminal without colour still shows.
    func output(colours: Bool, highlighted: Bool = false) -> TerminalOutput {
        var output = TerminalOutput()
        if highlighted { output += TerminalOutput(style: .reverse) }
        for run in runs {
            if colours, let style = run.style {
                output += TerminalOutput(style: style) + TerminalOutput(run.text) + .reset
                if highlighted { output += TerminalOutput(style: .reverse) }
            } else {
                output += TerminalOutput(run.text)
            }
        }
        if highlighted { output += .reset }
        return output
    }
}
