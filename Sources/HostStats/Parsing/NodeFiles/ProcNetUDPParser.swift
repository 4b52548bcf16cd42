/// Reads `/proc/net/udp` or `udp6` into the bytes queued on all UDP sockets: the sums of the
/// hexadecimal `tx_queue:rx_queue` column, as node_exporter's udp_queues collector reports them.
public enum ProcNetUDPParser {
    public static func parse(_ text: String, ip: String) throws(ParseError) -> UDPQueues {
        let source = ip == "v6" ? "/proc/net/udp6" : "/proc/net/udp"
        var queues = UDPQueues(ip: ip, transmitBytes: 0, receiveBytes: 0)
        var sawHeader = false
        for (index, line) in TextScanning.lines(text).enumerated() where !line.isEmpty {
            let fields = TextScanning.fields(line)
            if fields.first == "sl" {
                sawHeader = true
                continue
            }
            guard fields.count > 4, let colon = fields[4].firstIndex(of: ":"),
                let transmit = UInt64(fields[4][..<colon], radix: 16),
                let receive = UInt64(fields[4][fields[4].index(after: colon)...], radix: 16)
            else {
                throw ParseError(source: source, message: "no `tx_queue:rx_queue` in the fifth column", line: index + 1)
            }
            let (tx, txOverflow) = queues.transmitBytes.addingReportingOverflow(transmit)
            let (rx, rxOverflow) = queues.receiveBytes.addingReportingOverflow(receive)
            guard !txOverflow, !rxOverflow else {
                throw ParseError(source: source, message: "the queued bytes add up past 2^64", line: index + 1)
            }
            queues.transmitBytes = tx
            queues.receiveBytes = rx
        }
        guard sawHeader else {
            throw .unexpected(source: source, "no `sl local_address …` header", expected: "`cat \(source)`", text: text)
        }
        return queues
    }
}
