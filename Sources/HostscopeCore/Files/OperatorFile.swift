#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file the operator names on the command line (a hosts file, a TLS certificate), read whole only
/// when it is a regular file of bounded size.
///
/// Opened without blocking and checked on the opened descriptor, so a FIFO or a device given by
/// mistake is refused at once instead of hanging the start (or a reload) on a read, and a file far
/// larger than any such file could be is refused before a byte of it is read.
public enum OperatorFile {
    /// The largest hosts file read: 1 MiB, some 50,000 host names.
    public static let maximumHostsFileBytes = 1 << 20

    /// The file's bytes.
    ///
    /// - Parameters:
    ///   - what: how messages name the file, e.g. `the hosts file`.
    ///   - maximumBytes: the largest size read.
    /// - Throws: ``CoreError`` (`invalidRequest`) with one sentence naming the file and what to do.
    public static func bytes(at path: String, describedAs what: String, maximumBytes: Int) throws(CoreError)
        -> [UInt8]
    {
        let descriptor = try openRegularFile(at: path, describedAs: what)
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw CoreError(.invalidRequest, "cannot read \(what) \(path); check the path")
        }
        guard Int(status.st_size) <= maximumBytes else {
            throw CoreError(
                .invalidRequest,
                "refusing \(what) \(path): it is \(Int(status.st_size)) bytes, more than the \(limitText(maximumBytes)) "
                    + "read; is it the right file?")
        }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw CoreError(.invalidRequest, "cannot read \(what) \(path)") }
            if count == 0 { break }
            bytes += buffer[..<count]
            // A file that grows while it is read stops at the limit all the same.
            guard bytes.count <= maximumBytes else {
                throw CoreError(
                    .invalidRequest,
                    "refusing \(what) \(path): it is more than the \(limitText(maximumBytes)) read; is it the right file?"
                )
            }
        }
        return bytes
    }

    /// Throws unless `path` names a regular file this process can open, without reading it (another
    /// reader, such as a TLS library, opens it after).
    public static func checkRegularFile(at path: String, describedAs what: String) throws(CoreError) {
        close(try openRegularFile(at: path, describedAs: what))
    }

    /// The file opened for reading, once it is known to be a regular file.
    private static func openRegularFile(at path: String, describedAs what: String) throws(CoreError) -> Int32 {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            throw CoreError(.invalidRequest, "cannot read \(what) \(path); check the path")
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw CoreError(
                .invalidRequest,
                "cannot read \(what) \(path): it is not a regular file (a FIFO, device or directory); "
                    + "give the path of a file")
        }
        return descriptor
    }

    /// `1 MiB`, `64 KiB`, `100 bytes`.
    static func limitText(_ bytes: Int) -> String {
        if bytes >= 1 << 20, bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10, bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }
}
