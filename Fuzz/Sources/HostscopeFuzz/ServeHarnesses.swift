import Foundation
import HostscopeCore
import MetricsExposition
import ServeAPI
import ValueFormats

extension Harness {
    /// What `serve` reads off a request before any work: the query of every endpoint (numbers, times and
    /// durations among its values), the scrape-timeout header of `/probe`, the content negotiation headers,
    /// a `/probe` target through the admission rule, and the clamped conversions of numbers from outside.
    /// The first byte picks; the rest is the header or query text.
    static let serveRequest = Harness(name: "serve-request") { bytes in
        var input = FuzzInput(bytes)
        let selector = input.byte() % 5
        let value = text(input.rest())
        switch selector {
        case 0:
            for request in queries(value) {
                if case .failure(let error) = request {
                    check([400, 414].contains(error.status), "a query refused with status \(error.status)")
                    check(!error.message.isEmpty, "a query refused without a sentence")
                }
            }
        case 1:
            let standard = Duration.seconds(10)
            let wait = ProbeRequest.firstRecordWait(scrapeTimeout: value, standard: standard)
            check(wait >= .zero && wait <= standard, "a scrape timeout of \(value) gave a wait of \(wait)")
        case 2:
            let number = Double(value.trimmingCharacters(in: .whitespaces)) ?? Double(bitPattern: input.uint64())
            let clamped = Int64(clamping: number)
            check(!number.isNaN || clamped == 0, "NaN was not clamped to zero")
            check(number.isNaN || number < 0 || clamped >= 0, "\(number) clamped below zero")
            _ = UInt64(clamping: number, rounding: .up)
            _ = Int(clamping: number * 2, rounding: .toNearestOrAwayFromZero)
            _ = Duration.seconds(inSeconds: number)
            _ = RFC3339.format(Date(timeIntervalSince1970: number), precision: .nanoseconds)
            if let duration = DurationText.parse(value) { _ = DurationText.format(duration) }
        case 3:
            _ = ExpositionFormat.negotiate(accept: value)
            _ = ContentCoding.negotiate(acceptEncoding: value)
        default:
            guard let name = PatternAdmission.normalized(value) else { return }
            check(PatternAdmission.normalized(name) == name, "normalizing \(name) again changed it")
            check(!name.hasSuffix(".") && !name.contains(".."), "\(name) kept an empty label")
            _ = PatternAdmission.patternDots(selecting: name, patternList: "web-*,!web-evil,*.lan")
        }
    }

    /// Every endpoint's reading of the query `text`.
    private static func queries(_ text: String) -> [Result<Void, APIError>] {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        return [
            Result { () throws(APIError) in _ = try ProbeRequest(query: text) },
            Result { () throws(APIError) in _ = try SpanListRequest(query: text, now: now) },
            Result { () throws(APIError) in _ = try HistoryRequest(host: "web-1", query: text, now: now) },
            Result { () throws(APIError) in _ = try QueryParameters(text, allowed: ["types"]) },
        ]
    }
}
