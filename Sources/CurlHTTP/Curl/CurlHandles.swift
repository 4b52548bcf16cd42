internal import CCurl

/// Process-wide libcurl setup, done once before the first handle exists.
enum CurlRuntime {
    /// The result of `curl_global_init`; `swift_once` makes the call happen once, before any other thread
    /// can create a handle, which is all curl asks of it.
    static let initialization: CURLcode = hostscope_curl_global_init()

}

/// One curl easy handle with the buffers its options point at.
///
/// Not `Sendable`: it is created, configured, driven and freed on the transfer thread only. The header list
/// and error buffer live exactly as long as the handle because curl keeps pointers to both.
final class EasyHandle {
    let raw: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer: UnsafeMutablePointer<CChar>

    init?() {
        guard CurlRuntime.initialization == CURLE_OK, let raw = curl_easy_init() else {
            return nil
        }
        self.raw = raw
        errorBuffer = .allocate(capacity: hostscope_curl_error_size)
        errorBuffer.initialize(repeating: 0, count: hostscope_curl_error_size)
        _ = hostscope_curl_setopt_pointer(raw, CURLOPT_ERRORBUFFER, errorBuffer)
    }

    deinit {
        curl_easy_cleanup(raw)
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }

    func set(_ option: CURLoption, _ value: Int) -> CURLcode {
        hostscope_curl_setopt_long(raw, option, value)
    }

    /// curl copies string options (all but `CURLOPT_POSTFIELDS`, which is not set through here).
    func set(_ option: CURLoption, _ value: String) -> CURLcode {
        value.withCString { hostscope_curl_setopt_string(raw, option, $0) }
    }

    func set(_ option: CURLoption, pointer: UnsafeMutableRawPointer?) -> CURLcode {
        hostscope_curl_setopt_pointer(raw, option, pointer)
    }

    /// Sets `CURLOPT_HTTPHEADER`; the list stays owned here until the handle is freed.
    func setHeaderLines(_ lines: [String]) -> CURLcode {
        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines {
            guard let extended = curl_slist_append(list, line) else {
                curl_slist_free_all(list)
                return CURLE_OUT_OF_MEMORY
            }
            list = extended
        }
        curl_slist_free_all(headerList)
        headerList = list
        return hostscope_curl_setopt_slist(raw, CURLOPT_HTTPHEADER, list)
    }

    /// Copies the body into curl (`CURLOPT_COPYPOSTFIELDS`), so nothing here must outlive the call.
    func setBody(_ body: [UInt8]) -> CURLcode {
        let sized = hostscope_curl_setopt_off_t(raw, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count))
        guard sized == CURLE_OK else {
            return sized
        }
        if body.isEmpty {
            return "".withCString { hostscope_curl_setopt_string(raw, CURLOPT_COPYPOSTFIELDS, $0) }
        }
        return body.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) {
                hostscope_curl_setopt_string(raw, CURLOPT_COPYPOSTFIELDS, $0.baseAddress)
            }
        }
    }

    func longInfo(_ info: CURLINFO) -> Int? {
        var value = 0
        return hostscope_curl_getinfo_long(raw, info, &value) == CURLE_OK ? value : nil
    }

    func offsetInfo(_ info: CURLINFO) -> Int64? {
        var value: curl_off_t = 0
        return hostscope_curl_getinfo_off_t(raw, info, &value) == CURLE_OK ? Int64(value) : nil
    }

    /// curl's own sentence about the last failure, falling back to the generic text of `code`.
    func errorDetail(for code: CURLcode) -> String {
        let detail = String(cString: errorBuffer).trimmingBlanks()
        if !detail.isEmpty {
            return detail.hasSuffix("\n") ? String(detail.dropLast()) : detail
        }
        return String(cString: curl_easy_strerror(code))
    }
}

/// One curl multi handle, the connection cache and event loop shared by all of a client's transfers.
///
/// Not `Sendable`: only the transfer thread uses it, except for `curl_multi_wakeup`, which curl allows from
/// any thread and which `TransferLoop` calls under its lock while the handle is known to be alive.
final class MultiHandle {
    let raw: UnsafeMutableRawPointer

    init?() {
        guard CurlRuntime.initialization == CURLE_OK, let raw = curl_multi_init() else {
            return nil
        }
        self.raw = raw
    }

    deinit {
        curl_multi_cleanup(raw)
    }
}
