/// A row of block characters (`▁▂▃▄▅▆▇█`), one per value, each as high as its value within a scale: the
/// sparklines of `top` (percentages, 0 to 100) and of `history` (each figure between its own least and greatest).
public enum Sparkline {
    static let blocks: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]

    /// The last `width` values, right-aligned in `width` columns, scaled from `lowest` to `highest` (values
    /// outside are clamped; a scale of no height draws every value at the bottom).
    public static func render(_ values: [Double], width: Int, lowest: Double = 0, highest: Double = 100) -> String {
        let span = highest - lowest
        let shown = values.suffix(max(0, width)).map { value -> Character in
            guard span > 0, value.isFinite else { return blocks[0] }
            let share = (min(max(value, lowest), highest) - lowest) / span
            return blocks[Int((share * Double(blocks.count - 1)).rounded())]
        }
        return String(repeating: " ", count: max(0, width - shown.count)) + String(shown)
    }

    /// The values scaled between their own least and greatest.
    public static func render(scaledToFit values: [Double], width: Int) -> String {
        render(values, width: width, lowest: values.min() ?? 0, highest: values.max() ?? 0)
    }
}
