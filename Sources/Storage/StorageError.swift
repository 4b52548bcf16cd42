/// A failure of the history or span database, with a message a person can act on.
///
/// The message names the database file and what to do ("cannot open /x/hostscope.sqlite:
/// permission denied; pass another file with --db"); ``sqliteCode`` keeps SQLite's extended
/// result code for logs and for callers that branch on it.
public struct StorageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is. Extensible: switch with a `default` case.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case notFound = "not found"
            case cannotOpen = "cannot open"
            case permissionDenied = "permission denied"
            case readOnly = "read-only"
            case diskFull = "disk full"
            case busy
            case corrupt
            case newerSchema = "newer schema"
            case ambiguousPrefix = "ambiguous prefix"
            case invalidArgument = "invalid argument"
            case cancelled
            case ioError = "I/O error"
            case other
        }

        private let base: Base

        private init(_ base: Base) { self.base = base }

        /// The database file does not exist and the caller asked not to create it.
        public static let notFound = Code(.notFound)
        /// SQLite could not open the file or create its directory for a reason other than permissions.
        public static let cannotOpen = Code(.cannotOpen)
        /// The file or its directory is not readable or writable by this user.
        public static let permissionDenied = Code(.permissionDenied)
        /// A write was refused because the file or the file system is read-only.
        public static let readOnly = Code(.readOnly)
        /// The disk (or the configured size limit) is full; earlier rows are intact.
        public static let diskFull = Code(.diskFull)
        /// Another process held a lock for longer than the busy timeout.
        public static let busy = Code(.busy)
        /// The file is not an SQLite database, or is damaged.
        public static let corrupt = Code(.corrupt)
        /// The file was migrated by a newer hostscope whose schema this one does not know.
        public static let newerSchema = Code(.newerSchema)
        /// A span id prefix matched more than one span.
        public static let ambiguousPrefix = Code(.ambiguousPrefix)
        /// An argument cannot be stored or looked up (an empty span id, a limit below one).
        public static let invalidArgument = Code(.invalidArgument)
        /// The task that waited for the database was cancelled.
        public static let cancelled = Code(.cancelled)
        /// The operating system reported an I/O error.
        public static let ioError = Code(.ioError)
        /// Any other SQLite error.
        public static let other = Code(.other)

        public var description: String { base.rawValue }
    }

    /// What kind of failure this is.
    public var code: Code
    /// One sentence naming the file and what to do about it.
    public var message: String
    /// The database file concerned.
    public var path: String
    /// SQLite's extended result code (`SQLITE_FULL` is 13), when SQLite reported the failure.
    public var sqliteCode: Int32?

    /// Creates an error; ``message`` is printed as is.
    public init(code: Code, message: String, path: String, sqliteCode: Int32? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.sqliteCode = sqliteCode
    }

    public var description: String { message }
}
