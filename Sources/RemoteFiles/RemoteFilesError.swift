import SSHTransport
import ValueFormats

/// A failure of a remote file operation, with one sentence naming the host, the path and what to do.
public struct RemoteFilesError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is; the command line maps it to an exit status.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Base: String, Hashable, Sendable {
            case notFound, permissionDenied, symlinkLoop, outsideRoot, notADirectory, isADirectory, notAFile,
                changedWhileReading, connectionLost, timeout, invalidArgument, localFile, interrupted, failed
        }
        fileprivate let base: Base

        /// The path does not exist (or a symbolic link on the way points nowhere).
        public static let notFound = Code(base: .notFound)
        /// The server refused access.
        public static let permissionDenied = Code(base: .permissionDenied)
        /// Symbolic links on the way point back at each other.
        public static let symlinkLoop = Code(base: .symlinkLoop)
        /// The path resolves outside the `--root` workspace.
        public static let outsideRoot = Code(base: .outsideRoot)
        /// A directory was needed.
        public static let notADirectory = Code(base: .notADirectory)
        /// A file was needed and the path is a directory.
        public static let isADirectory = Code(base: .isADirectory)
        /// A regular file was needed (a device, FIFO or socket cannot be read safely).
        public static let notAFile = Code(base: .notAFile)
        /// The file vanished or shrank while it was read.
        public static let changedWhileReading = Code(base: .changedWhileReading)
        /// The SSH session broke during the operation.
        public static let connectionLost = Code(base: .connectionLost)
        /// The server did not answer in time.
        public static let timeout = Code(base: .timeout)
        /// An argument cannot be used (a byte range, a pattern, a glob).
        public static let invalidArgument = Code(base: .invalidArgument)
        /// A local file (a download's destination) could not be written.
        public static let localFile = Code(base: .localFile)
        /// The operation was cancelled (Ctrl-C) before it finished.
        public static let interrupted = Code(base: .interrupted)
        /// Any other failure the server reported.
        public static let failed = Code(base: .failed)

        public var description: String { base.rawValue }
    }

    public var code: Code
    /// One sentence naming the host, the path, what happened and what to do.
    public var message: String
    /// The SFTP status the server answered with, when it did.
    public var sftpStatus: UInt32?
    /// The part of a download kept for the next attempt to resume from, when a download stopped with one.
    public var partial: PartialDownload?

    public init(_ code: Code, _ message: String, sftpStatus: UInt32? = nil, partial: PartialDownload? = nil) {
        self.code = code
        self.message = message
        self.sftpStatus = sftpStatus
        self.partial = partial
    }

    public var description: String { message }
}

/// The bytes of an interrupted download kept under the partial name, which the same command resumes from.
public struct PartialDownload: Sendable, Equatable {
    /// The partial file (`.NAME.hostscope-partial` beside the destination).
    public var path: String
    /// Bytes it holds, and the remote file's size.
    public var bytes: UInt64
    public var size: UInt64

    public init(path: String, bytes: UInt64, size: UInt64) {
        self.path = path
        self.bytes = bytes
        self.size = size
    }

    /// `partial kept: PATH (N of M bytes); run the same command again to resume`.
    public var line: String {
        "partial kept: \(path) (\(bytes) of \(size) bytes); run the same command again to resume"
    }
}

extension RemoteFilesError {
    /// Translates an SSH layer failure on `path` into a file error whose message says what to do.
    ///
    /// OpenSSH's server answers "no such file" for a symbolic link loop as well (it maps ELOOP
    /// there); callers that can tell the two apart check links before calling this.
    static func from(_ error: any Error, host: String, operation: String, path: RemotePath) -> any Error {
        if let error = error as? RemoteFilesError { return error }
        guard let error = error as? SSHError else { return error }
        let subject = "\(host): cannot \(operation) \(path.escaped)"
        switch error.code {
        case .sessionClosed:
            return RemoteFilesError(
                .connectionLost,
                "\(subject): the SSH connection was lost; check that the host is up and run the command again")
        case .timeout:
            return RemoteFilesError(
                .timeout, "\(subject): the server did not answer in time; try again or raise --connect-timeout")
        case .sftp:
            break
        default:
            return RemoteFilesError(.failed, "\(subject): \(error.message)")
        }
        switch error.sftpStatus {
        case SFTPStatus.noSuchFile, 10:
            return RemoteFilesError(
                .notFound, "\(subject): no such file or directory; check the path with `hostscope files ls`",
                sftpStatus: error.sftpStatus)
        case SFTPStatus.permissionDenied:
            return RemoteFilesError(
                .permissionDenied,
                "\(subject): permission denied; connect as a user who may read it (--user) or pick another path",
                sftpStatus: error.sftpStatus)
        case 19:
            return RemoteFilesError(
                .notADirectory, "\(subject): not a directory", sftpStatus: error.sftpStatus)
        case 21:
            return RemoteFilesError(
                .symlinkLoop, "\(subject): symbolic links on the way loop back on themselves; fix or avoid the link",
                sftpStatus: error.sftpStatus)
        default:
            let status = error.sftpStatus.map { SFTPStatus.describe($0) } ?? error.message
            return RemoteFilesError(.failed, "\(subject): \(status)", sftpStatus: error.sftpStatus)
        }
    }
}
