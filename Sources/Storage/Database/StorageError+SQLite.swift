import Foundation
import GRDB

#if canImport(Glibc)
    import Glibc
#endif

/// What the store was doing when SQLite failed; it picks the verb of the message.
enum StorageOperation: Sendable {
    case open
    case read
    case write
}

extension StorageError {
    /// The advice every "this file will not do" message ends with.
    static let otherFileAdvice = "pass another file with --db or HOSTSCOPE_DB"

    /// Translates an error thrown by GRDB (or by task cancellation) into a message about `path`.
    init(_ error: any Error, path: String, operation: StorageOperation) {
        if let storageError = error as? StorageError {
            self = storageError
            return
        }
        if error is CancellationError {
            self.init(code: .cancelled, message: "stopped waiting for \(path): the task was cancelled", path: path)
            return
        }
        guard let databaseError = error as? DatabaseError else {
            self.init(code: .other, message: "\(path): \(error)", path: path)
            return
        }
        let extended = databaseError.extendedResultCode.rawValue
        let detail = databaseError.message ?? "SQLite error \(extended)"
        let verb =
            switch operation {
            case .open: "cannot open"
            case .read: "cannot read"
            case .write: "cannot write to"
            }
        switch databaseError.resultCode {
        case .SQLITE_CANTOPEN:
            // Also raised mid-run when a new reader cannot open the -wal or -shm file: same diagnosis.
            self = Self.diagnoseOpenFailure(path: path, sqliteCode: extended, detail: detail)
        case .SQLITE_FULL:
            self.init(
                code: .diskFull,
                message: "\(verb) \(path): the disk is full (or the database reached its size limit); "
                    + "earlier rows are intact; free some space, prune old rows, or \(Self.otherFileAdvice)",
                path: path, sqliteCode: extended)
        case .SQLITE_PERM, .SQLITE_AUTH:
            self.init(
                code: .permissionDenied, message: "\(verb) \(path): permission denied; \(Self.otherFileAdvice)",
                path: path, sqliteCode: extended)
        case .SQLITE_READONLY:
            self.init(
                code: .readOnly,
                message: "\(verb) \(path): the file or its directory is read-only; \(Self.otherFileAdvice)",
                path: path, sqliteCode: extended)
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            self.init(
                code: .busy,
                message: "\(verb) \(path): another process kept it locked for longer than the busy timeout; "
                    + "try again, or \(Self.otherFileAdvice)",
                path: path, sqliteCode: extended)
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            self.init(
                code: .corrupt,
                message: "\(verb) \(path): it is not an SQLite database or it is damaged (\(detail)); "
                    + "move it aside, or \(Self.otherFileAdvice)",
                path: path, sqliteCode: extended)
        case .SQLITE_IOERR:
            self.init(
                code: .ioError,
                message: "\(verb) \(path): the operating system reported an I/O error (\(detail)); "
                    + "check the disk, or \(Self.otherFileAdvice)",
                path: path, sqliteCode: extended)
        case .SQLITE_INTERRUPT:
            self.init(
                code: .cancelled, message: "\(verb) \(path): the operation was interrupted", path: path,
                sqliteCode: extended)
        default:
            self.init(code: .other, message: "\(verb) \(path): \(detail)", path: path, sqliteCode: extended)
        }
    }

    /// SQLite says only "unable to open database file"; the file system says why.
    static func diagnoseOpenFailure(path: String, sqliteCode: Int32?, detail: String) -> StorageError {
        let directory = (path as NSString).deletingLastPathComponent
        var status = stat()
        if stat(path, &status) == 0 {
            if (status.st_mode & S_IFMT) == S_IFDIR {
                return StorageError(
                    code: .cannotOpen, message: "cannot open \(path): it is a directory; \(otherFileAdvice)",
                    path: path, sqliteCode: sqliteCode)
            }
            if access(path, R_OK | W_OK) != 0 {
                return StorageError(
                    code: .permissionDenied,
                    message: "cannot open \(path): \(errnoText(errno)); \(otherFileAdvice)", path: path,
                    sqliteCode: sqliteCode)
            }
        } else if stat(directory, &status) != 0 {
            return StorageError(
                code: .cannotOpen,
                message: "cannot open \(path): directory \(directory) does not exist; \(otherFileAdvice)",
                path: path, sqliteCode: sqliteCode)
        }
        if access(directory, W_OK) != 0 {
            // The -wal and -shm files live beside the database, so its directory must be writable too.
            return StorageError(
                code: .permissionDenied,
                message: "cannot open \(path): directory \(directory): \(errnoText(errno)) "
                    + "(the database keeps its -wal and -shm files beside it); \(otherFileAdvice)",
                path: path, sqliteCode: sqliteCode)
        }
        return StorageError(
            code: .cannotOpen, message: "cannot open \(path): \(detail); \(otherFileAdvice)", path: path,
            sqliteCode: sqliteCode)
    }

    /// `strerror` with a lower-case first letter, to sit inside a sentence.
    static func errnoText(_ number: Int32) -> String {
        let text = String(cString: strerror(number))
        return text.prefix(1).lowercased() + text.dropFirst()
    }
}
