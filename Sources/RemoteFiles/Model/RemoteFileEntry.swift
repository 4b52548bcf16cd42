public import SSHTransport
public import ValueFormats

/// The kind of a directory entry, as Files JSON names it.
public enum RemoteFileType: String, Sendable, Equatable {
    case file, dir, symlink, other
}

/// One file, directory or link on the host with its attributes, as `ls -l` and Files JSON show it.
public struct RemoteFileEntry: Sendable, Equatable {
    /// The entry's own name (bytes; see ``RemotePath`` for how it is shown).
    public var name: [UInt8]
    /// The path by which the entry was reached, spelled from the argument the user gave.
    public var path: RemotePath
    public var type: RemoteFileType
    /// What `other` is, for long listings: `fifo`, `socket`, `characterDevice`, `blockDevice`, `unknown`.
    public var detailedType: SFTPFileType
    public var size: UInt64?
    /// Permission bits without the type bits (`0o644`).
    public var mode: UInt32?
    public var uid: UInt32?
    public var gid: UInt32?
    /// Modification time, seconds since 1970 (UTC).
    public var modificationTime: UInt32?
    /// The target stored in a symbolic link.
    public var linkTarget: [UInt8]?
    /// Owner and group names when the server sent them in its long listing (OpenSSH does).
    public var owner: String?
    public var group: String?

    public init(
        name: [UInt8], path: RemotePath, attributes: SFTPAttributes, linkTarget: [UInt8]? = nil,
        owner: String? = nil, group: String? = nil
    ) {
        self.name = name
        self.path = path
        detailedType = attributes.type
        switch attributes.type {
        case .file: type = .file
        case .directory: type = .dir
        case .symlink: type = .symlink
        default: type = .other
        }
        size = attributes.size
        mode = attributes.mode
        uid = attributes.uid
        gid = attributes.gid
        modificationTime = attributes.modificationTime
        self.linkTarget = linkTarget
        self.owner = owner
        self.group = group
    }

    /// The name in the escaped form.
    public var escapedName: String { EscapedText.encode(name) }

    /// `0644`-style octal permissions.
    public var modeText: String? {
        mode.map { value in
            let digits = String(value, radix: 8)
            return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        }
    }

    /// The mark `ls -F` (`--classify`) puts after the name: `/` a directory, `@` a link, `*` an executable
    /// regular file (any execute bit), `|` a FIFO, `=` a socket, nothing otherwise.
    public var typeIndicator: String {
        switch detailedType {
        case .directory: "/"
        case .symlink: "@"
        case .fifo: "|"
        case .socket: "="
        case .file: (mode ?? 0) & 0o111 != 0 ? "*" : ""
        default: ""
        }
    }

    /// `drwxr-xr-x`-style type and permissions.
    public var permissionsText: String {
        let typeCharacter: Character =
            switch detailedType {
            case .directory: "d"
            case .symlink: "l"
            case .fifo: "p"
            case .socket: "s"
            case .characterDevice: "c"
            case .blockDevice: "b"
            case .file: "-"
            case .unknown: "?"
            }
        guard let mode else { return String(typeCharacter) + "?????????" }
        var text = String(typeCharacter)
        let symbols: [Character] = ["r", "w", "x"]
        for shift in stride(from: 6, through: 0, by: -3) {
            for (index, symbol) in symbols.enumerated() {
                let bit = UInt32(1) << UInt32(shift + 2 - index)
                var character: Character = mode & bit != 0 ? symbol : "-"
                if index == 2 {
                    let special: UInt32 = shift == 6 ? 0o4000 : shift == 3 ? 0o2000 : 0o1000
                    if mode & special != 0 {
                        let letter: Character = shift == 0 ? "t" : "s"
                        character = mode & bit != 0 ? letter : Character(letter.uppercased())
                    }
                }
                text.append(character)
            }
        }
        return text
    }
}

/// A directory tree: an entry, the entries below it, and what went wrong reading it.
public struct RemoteFileTree: Sendable, Equatable {
    public var entry: RemoteFileEntry
    /// The entries below a directory that was read; `nil` for files, links, and directories at
    /// the depth limit or that could not be read.
    public var children: [RemoteFileTree]?
    /// Why this directory's entries are missing (permission denied, a symbolic link loop …).
    public var error: RemoteFilesError?

    public init(entry: RemoteFileEntry, children: [RemoteFileTree]? = nil, error: RemoteFilesError? = nil) {
        self.entry = entry
        self.children = children
        self.error = error
    }
}
