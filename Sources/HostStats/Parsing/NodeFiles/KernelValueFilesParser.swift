/// Reads the one-line files of ``NodeFigures``: `/proc/sys/fs/file-nr` (`allocated  unused
/// maximum`) and the single numbers of `entropy_avail`, `poolsize`, `nf_conntrack_count` and
/// `nf_conntrack_max`.
public enum KernelValueFilesParser {
    /// `/proc/sys/fs/file-nr`: allocated and maximum file handles.
    public static func parseFileNr(_ text: String) throws(ParseError) -> (allocated: UInt64, maximum: UInt64) {
        let fields = KernelFigureLines.words(text)
        guard fields.count == 3, let allocated = TextScanning.counter(fields[0]),
            let maximum = TextScanning.counter(fields[2])
        else {
            throw ParseError(
                source: "/proc/sys/fs/file-nr", message: "expected three whole numbers, got `\(text.prefix(60))`")
        }
        return (allocated, maximum)
    }

    /// A file holding one whole number.
    public static func parseValue(_ text: String, source: String) throws(ParseError) -> UInt64 {
        try KernelFigureLines.single(text, source: source)
    }
}
