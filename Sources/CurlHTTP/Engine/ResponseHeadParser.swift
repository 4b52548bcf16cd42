/// Assembles a response head from the header lines curl hands over one by one.
///
/// curl reports every response it sees on the way, interim `1xx` ones included, each as a status line,
/// header lines and an empty line. The head is complete at the empty line after a final status, which may be
/// long before the first body byte (a server-sent-events stream), so it is delivered then and not later.
struct ResponseHeadParser {
    private var status: Int?
    private var reason = ""
    private var version = ""
    private var headers = HTTPHeaders()
    private var lastName: String?
    private var lastValue = ""
    private(set) var isComplete = false

    /// Feeds one header line, CRLF or LF included; returns the head when this line completed it.
    mutating func consume(_ line: some Collection<UInt8>) -> HTTPResponseHead? {
        guard !isComplete else {
            // Trailers of a chunked body: not part of the head.
            return nil
        }
        // Strip the line end as bytes: as Characters, "\r\n" is one grapheme that is neither "\r" nor "\n".
        var bytes = Array(line)
        while bytes.last == UInt8(ascii: "\n") || bytes.last == UInt8(ascii: "\r") {
            bytes.removeLast()
        }
        let text = Substring(String(decoding: bytes, as: UTF8.self))
        if text.hasPrefix("HTTP/") {
            startResponse(statusLine: text)
            return nil
        }
        if text.isEmpty {
            flushField()
            guard let status else {
                return nil
            }
            if (100..<200).contains(status) && status != 101 {
                // An interim response such as 100 Continue; the real one follows.
                self.status = nil
                headers = HTTPHeaders()
                return nil
            }
            isComplete = true
            return HTTPResponseHead(status: status, reason: reason, version: version, headers: headers)
        }
        if text.first == " " || text.first == "\t" {
            // An obsolete folded continuation of the previous field's value.
            lastValue += " " + text.trimmingBlanks()
            return nil
        }
        flushField()
        if let colon = text.firstIndex(of: ":") {
            lastName = String(text[..<colon])
            lastValue = text[text.index(after: colon)...].trimmingBlanks()
        }
        return nil
    }

    private mutating func startResponse(statusLine: Substring) {
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        version = parts.first.map(String.init) ?? ""
        status = parts.count > 1 ? Int(parts[1]) : nil
        reason = parts.count > 2 ? parts[2].trimmingBlanks() : ""
        headers = HTTPHeaders()
        lastName = nil
    }

    private mutating func flushField() {
        if let name = lastName {
            headers.add(name: name, value: lastValue)
        }
        lastName = nil
        lastValue = ""
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs, the only blanks HTTP allows around values.
    func trimmingBlanks() -> String {
        guard let first = firstIndex(where: { $0 != " " && $0 != "\t" }) else {
            return ""
        }
        let last = lastIndex { $0 != " " && $0 != "\t" }!
        return String(self[first...last])
    }
}
