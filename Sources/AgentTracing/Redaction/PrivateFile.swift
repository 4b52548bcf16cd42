#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file that holds secrets (an API key, request headers, a URL with a token), read only when nobody but
/// its owner can read it.
///
/// A secret given on the command line is readable by every local user in `/proc/PID/cmdline` while the
/// process runs; a file with mode 0600 is not. The mode is checked on the opened descriptor, so the file
/// read is the file checked. A pipe (`@<(pass show otlp)` in bash) passes too: its mode is the owner's.
public enum PrivateFile {
    /// The largest file read; secrets are small, and a wrong path (a log, a device) should fail fast.
    public static let maximumBytes = 1 << 20

    /// The file's text, when it is a regular file or a pipe that only its owner can read.
    ///
    /// - Parameter what: how messages name the file, e.g. `the credentials file`.
    public static func text(at path: String, describedAs what: String) throws(PrivateFileError) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            throw PrivateFileError(
                code: .notFound, message: "cannot read \(what) \(path): it does not exist or is not accessible")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw PrivateFileError(code: .unreadable, message: "cannot read \(what) \(path)")
        }
        let type = status.st_mode & S_IFMT
        guard type == S_IFREG || type == S_IFIFO else {
            throw PrivateFileError(
                code: .unreadable, message: "cannot read \(what) \(path): it is not a file; give the path of a file")
        }
        let mode = Int(status.st_mode & 0o7777)
        guard mode & 0o077 == 0 else {
            throw PrivateFileError(
                code: .readableByOthers,
                message: "refusing \(what) \(path): its mode is \(octal(mode)), so others can read it; "
                    + "run: chmod 600 \(path)")
        }
        // Opened without blocking so that a FIFO with no writer cannot hang the open; reads block again.
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else {
                throw PrivateFileError(code: .unreadable, message: "cannot read \(what) \(path)")
            }
            if count == 0 { break }
            bytes += buffer[..<count]
            guard bytes.count <= maximumBytes else {
                throw PrivateFileError(
                    code: .unreadable,
                    message: "refusing \(what) \(path): it is larger than \(maximumBytes >> 20) MiB; "
                        + "is it the right file?")
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `0644`: a mode as `ls` users read it.
    public static func octal(_ mode: Int) -> String {
        let digits = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

/// Why a private file could not be used.
public struct PrivateFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable {
        /// The file does not exist or cannot be opened.
        case notFound = "not_found"
        /// Its mode lets users other than its owner read it.
        case readableByOthers = "readable_by_others"
        /// It is not a file, cannot be read, or is too large.
        case unreadable
    }

    /// What went wrong.
    public var code: Code
    /// One sentence saying what happened and what to do.
    public var message: String

    /// Creates an error.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
