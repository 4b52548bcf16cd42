import CZlib

/// gzip (RFC 1952) compression of whole buffers through the system's zlib, for request bodies such as
/// OTLP/HTTP exports sent with `Content-Encoding: gzip`.
///
/// The only module that imports `CZlib`; no zlib type appears in its API.
public enum Gzip {
    /// How hard deflate works: 1 is fastest, 9 smallest, 6 zlib's default.
    public struct Level: Sendable, Equatable {
        /// zlib's level number, 1 to 9.
        public let rawValue: Int32

        /// A level from 1 (fastest) to 9 (smallest); values outside are clamped.
        public init(_ rawValue: Int) {
            self.rawValue = Int32(min(9, max(1, rawValue)))
        }

        /// Level 1: about half the size of typical telemetry for little CPU.
        public static let fastest = Level(1)
        /// Level 6, zlib's default.
        public static let standard = Level(6)
        /// Level 9.
        public static let smallest = Level(9)
    }

    /// `bytes` as one gzip member.
    public static func compress(_ bytes: [UInt8], level: Level = .fastest) -> [UInt8] {
        var stream = z_stream()
        // Only an invalid level or memLevel, or no memory, fail here; neither can happen with these arguments
        // short of the process running out of memory, which Swift treats as fatal everywhere else too.
        guard hostscope_deflate_init_gzip(&stream, level.rawValue) == Z_OK else {
            fatalError("zlib could not start a deflate stream (out of memory)")
        }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(bytes.count))))
        let produced = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { buffer -> Int in
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.avail_in = uInt(input.count)
                stream.next_out = buffer.baseAddress
                stream.avail_out = uInt(buffer.count)
                // deflateBound leaves room for the whole stream, so one call finishes it.
                let status = deflate(&stream, Z_FINISH)
                precondition(status == Z_STREAM_END, "deflate did not finish within deflateBound (\(status))")
                return buffer.count - Int(stream.avail_out)
            }
        }
        output.removeSubrange(produced...)
        return output
    }

    /// The contents of a gzip stream (several members are read one after another, as `gunzip` does).
    ///
    /// - Parameter maximumBytes: the most the result may hold; a stream that inflates to more is refused
    ///   (a small body can expand a thousandfold).
    public static func decompress(_ bytes: [UInt8], maximumBytes: Int = 64 << 20) throws(GzipError) -> [UInt8] {
        var output: [UInt8] = []
        var offset = 0
        repeat {
            let (member, consumed) = try inflateMember(bytes, from: offset, limit: maximumBytes - output.count)
            output.append(contentsOf: member)
            offset += consumed
        } while offset < bytes.count
        return output
    }

    private static func inflateMember(
        _ bytes: [UInt8], from offset: Int, limit: Int
    ) throws(GzipError) -> (bytes: [UInt8], consumed: Int) {
        var stream = z_stream()
        guard hostscope_inflate_init_gzip(&stream) == Z_OK else {
            throw GzipError(code: .memory, message: "zlib could not start an inflate stream")
        }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let result: Result<Int, GzipError> = bytes.withUnsafeBufferPointer { input in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress! + offset)
            stream.avail_in = uInt(input.count - offset)
            while true {
                let status = chunk.withUnsafeMutableBufferPointer { buffer -> Int32 in
                    stream.next_out = buffer.baseAddress
                    stream.avail_out = uInt(buffer.count)
                    return inflate(&stream, Z_NO_FLUSH)
                }
                let produced = chunk.count - Int(stream.avail_out)
                if output.count + produced > limit {
                    return .failure(
                        GzipError(code: .tooLarge, message: "the gzip body inflates to more than \(limit) bytes"))
                }
                output.append(contentsOf: chunk[..<produced])
                switch status {
                case Z_STREAM_END:
                    return .success(input.count - offset - Int(stream.avail_in))
                case Z_OK:
                    continue
                case Z_BUF_ERROR where stream.avail_in == 0:
                    return .failure(GzipError(code: .truncated, message: "the gzip body ends before its trailer"))
                default:
                    let reason = stream.msg.map { String(cString: $0) } ?? "zlib status \(status)"
                    return .failure(GzipError(code: .corrupt, message: "the body is not valid gzip: \(reason)"))
                }
            }
        }
        let consumed = try result.get()
        return (output, consumed)
    }
}

/// A gzip stream that could not be read: one sentence saying why.
public struct GzipError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure.
    public enum Code: Sendable, Equatable {
        /// Not gzip, or damaged.
        case corrupt
        /// The stream stops before its end.
        case truncated
        /// It inflates beyond the limit given.
        case tooLarge
        /// zlib could not allocate its state.
        case memory
    }

    /// What kind of failure.
    public var code: Code
    /// What happened.
    public var message: String

    /// Creates an error.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
