internal import CCurl
import ValueFormats

/// A transfer on the transfer thread: its easy handle and everything curl's callbacks touch.
///
/// The driver's table holds it from `curl_multi_add_handle` until after `curl_multi_remove_handle`, so the
/// unretained pointer curl passes to the callbacks is valid for every call curl can make.
final class ActiveTransfer {
    let transfer: Transfer
    let easy: EasyHandle
    let startedAt: ContinuousClock.Instant
    var lastActivity: ContinuousClock.Instant
    var isPaused = false
    private var isConnected = false
    private var headParser = ResponseHeadParser()
    private var bodyBytes = 0
    private var progressSeen: (Int64, Int64) = (0, 0)
    private var peer: String

    init(transfer: Transfer, easy: EasyHandle, startedAt: ContinuousClock.Instant) {
        self.transfer = transfer
        self.easy = easy
        self.startedAt = startedAt
        self.lastActivity = startedAt
        let url = transfer.request.parsedURL
        self.peer = url.host.contains(":") ? "[\(url.host)]:\(url.effectivePort)" : "\(url.host):\(url.effectivePort)"
    }

    // MARK: Setup

    func configure() throws(HTTPError) {
        let request = transfer.request
        let context = Unmanaged.passUnretained(self).toOpaque()
        try check(easy.set(CURLOPT_URL, request.url), "the URL")
        try check(easy.set(CURLOPT_PROTOCOLS_STR, "http,https"), "the allowed protocols")
        // Signals would be delivered to whichever thread curl runs on; timeouts are enforced without them.
        try check(easy.set(CURLOPT_NOSIGNAL, 1), "signal handling")
        let connectMillis = max(1, request.timeouts.connect.roundedUpMilliseconds)
        try check(easy.set(CURLOPT_CONNECTTIMEOUT_MS, Int(connectMillis)), "the connect timeout")
        try check(easy.set(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1), "proxy header suppression")
        try check(easy.set(CURLOPT_TCP_KEEPALIVE, 1), "TCP keepalive")
        try check(easy.set(CURLOPT_USERAGENT, request.userAgent), "the user agent")
        if request.parsedURL.isLoopback {
            // An empty proxy disables any proxy from the environment: this machine is reached directly.
            try check(easy.set(CURLOPT_PROXY, ""), "the proxy")
        }
        if let path = request.caBundlePath {
            try check(easy.set(CURLOPT_CAINFO, path), "the CA bundle")
        }
        try configureMethodAndBody()
        try check(easy.setHeaderLines(request.headerLines), "the headers")

        try check(hostscope_curl_setopt_data_callback(easy.raw, CURLOPT_WRITEFUNCTION, writeCallback), "a callback")
        try check(easy.set(CURLOPT_WRITEDATA, pointer: context), "a callback")
        try check(hostscope_curl_setopt_data_callback(easy.raw, CURLOPT_HEADERFUNCTION, headerCallback), "a callback")
        try check(easy.set(CURLOPT_HEADERDATA, pointer: context), "a callback")
        try check(hostscope_curl_setopt_progress_callback(easy.raw, progressCallback), "a callback")
        try check(easy.set(CURLOPT_XFERINFODATA, pointer: context), "a callback")
        try check(easy.set(CURLOPT_NOPROGRESS, 0), "a callback")
        try check(hostscope_curl_setopt_prereq_callback(easy.raw, prereqCallback), "a callback")
        try check(easy.set(CURLOPT_PREREQDATA, pointer: context), "a callback")
    }

    private func configureMethodAndBody() throws(HTTPError) {
        let request = transfer.request
        switch request.method {
        case .get where request.body.isEmpty:
            return
        case .head:
            try check(easy.set(CURLOPT_NOBODY, 1), "the method")
            return
        default:
            break
        }
        if !request.body.isEmpty || request.method == .post {
            try check(easy.setBody(request.body), "the body")
        }
        if request.method != .post {
            try check(easy.set(CURLOPT_CUSTOMREQUEST, request.method.rawValue), "the method")
        }
    }

    private func check(_ code: CURLcode, _ what: String) throws(HTTPError) {
        guard code == CURLE_OK else {
            throw HTTPError(
                code: .internalError,
                message: "\(transfer.request.summary) was not sent: libcurl refused \(what): "
                    + String(cString: curl_easy_strerror(code)),
                curlCode: Int(code.rawValue))
        }
    }

    // MARK: Callbacks (on the transfer thread, from inside curl)

    fileprivate func receiveHeaderLine(_ line: UnsafeRawBufferPointer) -> Int {
        lastActivity = ContinuousClock.now
        isConnected = true
        if let head = headParser.consume(line) {
            transfer.deliverHead(head)
        }
        return line.count
    }

    fileprivate func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        lastActivity = ContinuousClock.now
        isConnected = true
        deliverHeadIfMissing()
        switch transfer.deliverChunk(Array(bytes)) {
        case .accepted:
            bodyBytes += bytes.count
            return bytes.count
        case .pause:
            isPaused = true
            return hostscope_curl_writefunc_pause
        case .abort:
            // Fewer bytes than offered makes curl stop this transfer with CURLE_WRITE_ERROR.
            return 0
        }
    }

    fileprivate func progress(downloaded: Int64, uploaded: Int64) -> Int32 {
        // Upload progress counts as activity: a large body being sent is not a silent server.
        if (downloaded, uploaded) != progressSeen {
            progressSeen = (downloaded, uploaded)
            lastActivity = ContinuousClock.now
        }
        return 0
    }

    fileprivate func connected(peer address: String?, port: Int) {
        isConnected = true
        lastActivity = ContinuousClock.now
        if let address, !address.isEmpty {
            peer = address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)"
        }
    }

    // MARK: Outcome

    /// Completes the head from curl's counters when the header callback never saw a final empty line.
    func deliverHeadIfMissing() {
        guard !headParser.isComplete else {
            return
        }
        let status = easy.longInfo(CURLINFO_RESPONSE_CODE) ?? 0
        _ = headParser.consume(Array("HTTP/1.1 \(status)\r\n".utf8))
        if let head = headParser.consume(Array("\r\n".utf8)) {
            transfer.deliverHead(head)
        }
    }

    /// The earliest idle or total deadline, with the error to report when it passes.
    func nextDeadline(now: ContinuousClock.Instant) -> (ContinuousClock.Instant, () -> HTTPError)? {
        let timeouts = transfer.request.timeouts
        var earliest: (ContinuousClock.Instant, () -> HTTPError)?
        if let total = timeouts.total {
            earliest = (startedAt + total, { self.timeoutError(total: total) })
        }
        if let idle = timeouts.idle, isConnected, !isPaused {
            let deadline = lastActivity + idle
            if earliest == nil || deadline < earliest!.0 {
                earliest = (deadline, { self.timeoutError(idle: idle) })
            }
        }
        return earliest
    }

    private func timeoutError(idle: Duration) -> HTTPError {
        let summary = transfer.request.summary
        let message: String
        if headParser.isComplete {
            message =
                "\(summary): the response body stalled: nothing from \(peer) for \(idle.humanReadable) after "
                + "\(bodyBytes) bytes (idle timeout); the server may be overloaded, or raise the idle timeout"
        } else {
            message =
                "\(summary): no response from \(peer) within \(idle.humanReadable) (idle timeout); the server "
                + "may be overloaded or stuck, or raise the idle timeout if it is slow to answer"
        }
        return HTTPError(code: .timeout, message: message)
    }

    private func timeoutError(total: Duration) -> HTTPError {
        HTTPError(
            code: .timeout,
            message: "\(transfer.request.summary): not finished within \(total.humanReadable) (total timeout) "
                + "after \(bodyBytes) body bytes; raise the total timeout for large or slow responses")
    }

    func shutdownError() -> HTTPError {
        HTTPError(
            code: .shutdown,
            message: "\(transfer.request.summary) was interrupted: the HTTP client was shut down")
    }

    /// Turns curl's result into an error naming the request, what failed, curl's own words and what to do.
    func error(for code: CURLcode) -> HTTPError {
        let request = transfer.request
        let detail = request.parsedURL.scrub(easy.errorDetail(for: code))
        let host = request.parsedURL.host
        let what: String
        let advice: String
        let kind: HTTPError.Code
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST:
            (kind, what, advice) = (.resolve, "could not resolve \(host)", "check the host name and DNS")
        case CURLE_COULDNT_RESOLVE_PROXY:
            (kind, what, advice) = (
                .resolve, "could not resolve the proxy", "check the https_proxy and http_proxy variables"
            )
        case CURLE_COULDNT_CONNECT:
            (kind, what, advice) = (
                .connect, "could not connect to \(peer)", "check that the server runs and listens on that port"
            )
        case CURLE_OPERATION_TIMEDOUT:
            (kind, what, advice) = (
                .timeout,
                "no connection to \(peer) within \(request.timeouts.connect.humanReadable) (connect timeout)",
                "the host may be down or a firewall may drop packets; raise the connect timeout on slow links"
            )
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_USE_SSL_FAILED, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CRL_BADFILE,
            CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS,
            CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED,
            CURLE_SSL_CLIENTCERT:
            (kind, what, advice) = (
                .tls, "the TLS connection to \(peer) failed",
                "check the server's certificate and host name, the CA bundle and the system clock"
            )
        case CURLE_SEND_ERROR:
            (kind, what, advice) = (
                .send, "sending the request to \(peer) failed", "the connection broke; retrying may help"
            )
        case CURLE_RECV_ERROR:
            (kind, what, advice) = (
                .receive, "receiving the response from \(peer) failed",
                "the connection broke or the body was malformed; retrying may help"
            )
        case CURLE_PARTIAL_FILE:
            (kind, what, advice) = (
                .closed, "the server closed the connection after \(bodyBytes) body bytes, before the end",
                "the server may have crashed or restarted; retrying may help"
            )
        case CURLE_GOT_NOTHING:
            (kind, what, advice) = (
                .closed, "the server closed the connection without answering",
                "the server may have crashed or rejected the connection; retrying may help"
            )
        case CURLE_WEIRD_SERVER_REPLY, CURLE_UNSUPPORTED_PROTOCOL, CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_HTTP3,
            CURLE_BAD_CONTENT_ENCODING, CURLE_TOO_MANY_REDIRECTS:
            (kind, what, advice) = (
                .protocolError, "the reply from \(peer) was not valid HTTP for this request",
                "check that the URL points at an HTTP server of the expected kind"
            )
        case CURLE_URL_MALFORMAT:
            (kind, what, advice) = (.invalidRequest, "the URL was refused", "check the URL")
        default:
            (kind, what, advice) = (.internalError, "the transfer failed", "retrying may help")
        }
        return HTTPError(
            code: kind, message: "\(request.summary): \(what): \(detail); \(advice)", curlCode: Int(code.rawValue))
    }
}

// C function pointers cannot capture; each finds its transfer through the context pointer curl passes back.

private let writeCallback: hostscope_curl_data_callback = { data, size, count, context in
    guard let context, let data else {
        return 0
    }
    let transfer = Unmanaged<ActiveTransfer>.fromOpaque(context).takeUnretainedValue()
    return transfer.receiveBody(UnsafeRawBufferPointer(start: data, count: size * count))
}

private let headerCallback: hostscope_curl_data_callback = { data, size, count, context in
    guard let context, let data else {
        return 0
    }
    let transfer = Unmanaged<ActiveTransfer>.fromOpaque(context).takeUnretainedValue()
    return transfer.receiveHeaderLine(UnsafeRawBufferPointer(start: data, count: size * count))
}

private let progressCallback: hostscope_curl_progress_callback = { context, _, downloaded, _, uploaded in
    guard let context else {
        return 0
    }
    let transfer = Unmanaged<ActiveTransfer>.fromOpaque(context).takeUnretainedValue()
    return transfer.progress(downloaded: Int64(downloaded), uploaded: Int64(uploaded))
}

private let prereqCallback: hostscope_curl_prereq_callback = { context, primaryIP, _, primaryPort, _ in
    guard let context else {
        return 0
    }
    let transfer = Unmanaged<ActiveTransfer>.fromOpaque(context).takeUnretainedValue()
    transfer.connected(peer: primaryIP.map { String(cString: $0) }, port: Int(primaryPort))
    // CURL_PREREQFUNC_OK
    return 0
}
