/// Reads the line the probe's `perl` prints from `adjtimex(2)` in read-only mode (``LinuxProcProbe/timexScript``):
/// the call's return value (the clock state, `5` = `TIME_ERROR`, not synchronised) and the fields
/// of `struct timex` in their order.
public enum TimexParser {
    static let source = "adjtimex"

    public static func parse(_ text: String) throws(ParseError) -> KernelTimex {
        let fields = KernelFigureLines.words(text)
        guard fields.count == 22 else {
            throw ParseError(source: source, message: "expected 22 numbers, got \(fields.count): `\(text.prefix(80))`")
        }
        var numbers: [Int64] = []
        for field in fields {
            guard let number = Int64(field) else {
                throw ParseError(source: source, message: "`\(field.prefix(24))` is not a whole number")
            }
            numbers.append(number)
        }
        guard numbers[0] >= 0 else {
            throw ParseError(source: source, message: "the call failed (\(numbers[0]))")
        }
        // numbers[1] is `modes` (0, a read) and [10], [11] the time of day, which node_exporter leaves out.
        return KernelTimex(
            state: numbers[0], offset: numbers[2], frequency: numbers[3], maxError: numbers[4],
            estimatedError: numbers[5], status: numbers[6], constant: numbers[7], precision: numbers[8],
            tolerance: numbers[9], tick: numbers[12], ppsFrequency: numbers[13], jitter: numbers[14],
            shift: numbers[15], stability: numbers[16], jitterCount: numbers[17], calibrationCount: numbers[18],
            errorCount: numbers[19], stabilityExceededCount: numbers[20], taiOffset: numbers[21])
    }
}
