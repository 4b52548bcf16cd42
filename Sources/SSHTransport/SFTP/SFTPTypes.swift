/// What kind of file an entry is, from its mode bits.
public enum SFTPFileType: String, Sendable, Equatable {
    case file, directory, symlink, fifo, socket, characterDevice, blockDevice, unknown
}

/// File attributes as the server reports them; each is `nil` when the server did not send it.
public struct SFTPAttributes: Sendable, Equatable {
    public var size: UInt64?
    public var uid: UInt32?
    public var gid: UInt32?
    /// Mode bits including the file type bits (`0o100644`).
    public var permissions: UInt32?
    public var accessTime: UInt32?
    public var modificationTime: UInt32?

    public init(
        size: UInt64? = nil, uid: UInt32? = nil, gid: UInt32? = nil, permissions: UInt32? = nil,
        accessTime: UInt32? = nil, modificationTime: UInt32? = nil
    ) {
        self.size = size
        self.uid = uid
        self.gid = gid
        self.permissions = permissions
        self.accessTime = accessTime
        self.modificationTime = modificationTime
    }

    public var type: SFTPFileType {
        guard let permissions else { return .unknown }
        switch permissions & 0o170000 {
        case 0o100000: return .file
        case 0o040000: return .directory
        case 0o120000: return .symlink
        case 0o010000: return .fifo
        case 0o140000: return .socket
        case 0o020000: return .characterDevice
        case 0o060000: return .blockDevice
        default: return .unknown
        }
    }

    /// The permission bits alone (`0o644`), without the type bits.
    public var mode: UInt32? { permissions.map { $0 & 0o7777 } }
}

/// One entry of a directory listing.
public struct SFTPDirectoryEntry: Sendable, Equatable {
    /// The entry's name, as bytes.
    public var name: [UInt8]
    /// The server's `ls -l`-style line (OpenSSH sends one; it carries owner names).
    public var longName: String?
    public var attributes: SFTPAttributes

    public init(name: [UInt8], longName: String?, attributes: SFTPAttributes) {
        self.name = name
        self.longName = longName
        self.attributes = attributes
    }
}

/// SFTP status codes (draft-ietf-secsh-filexfer-02) that callers branch on.
public enum SFTPStatus {
    public static let endOfFile: UInt32 = 1
    public static let noSuchFile: UInt32 = 2
    public static let permissionDenied: UInt32 = 3
    public static let failure: UInt32 = 4
    public static let badMessage: UInt32 = 5
    public static let noConnection: UInt32 = 6
    public static let connectionLost: UInt32 = 7
    public static let operationUnsupported: UInt32 = 8

    /// A few words for a status, as used in error messages.
    public static func describe(_ status: UInt32) -> String {
        switch status {
        case endOfFile: "end of file"
        case noSuchFile: "no such file or directory"
        case permissionDenied: "permission denied"
        case failure: "the server reported a failure"
        case badMessage: "bad message"
        case noConnection: "no connection"
        case connectionLost: "connection lost"
        case operationUnsupported: "operation not supported by the server"
        case 9: "invalid handle"
        case 10: "no such path"
        case 11: "file already exists"
        case 12: "write protected"
        case 13: "no media"
        case 14: "no space on filesystem"
        case 15: "quota exceeded"
        case 16: "unknown principal"
        case 17: "lock conflict"
        case 18: "directory not empty"
        case 19: "not a directory"
        case 20: "invalid filename"
        case 21: "too many symbolic links"
        default: "SFTP status \(status)"
        }
    }
}
