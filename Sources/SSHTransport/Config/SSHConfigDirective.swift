/// Where a line of ssh_config came from, for messages a person can follow back to the file.
public struct SSHConfigLocation: Sendable, Hashable, CustomStringConvertible {
    /// The file's path as it was read (or the name given to text parsed from memory).
    public var file: String
    /// The 1-based line number.
    public var line: Int

    /// A line of a file.
    public init(file: String, line: Int) {
        self.file = file
        self.line = line
    }

    public var description: String { "\(file) line \(line)" }
}

/// One `Keyword arguments…` line of ssh_config, after quotes, escapes and comments are taken apart.
public struct SSHConfigDirective: Sendable, Hashable {
    /// The keyword in lower case: keywords are case-insensitive.
    public var keyword: String
    /// The keyword as written, for messages.
    public var spelling: String
    /// The arguments, unquoted, in order.
    public var arguments: [String]
    /// The file and line that hold it.
    public var location: SSHConfigLocation
    /// The value as written, quotes and all (trailing blanks dropped): `ssh` hands a `ProxyCommand` to the
    /// shell this way. Nil for directives not read from a line.
    public var rawValue: String?

    /// A directive; `keyword` is lower-cased, and `spelling` defaults to it as given.
    public init(
        keyword: String, spelling: String? = nil, arguments: [String], location: SSHConfigLocation,
        rawValue: String? = nil
    ) {
        self.keyword = keyword.lowercased()
        self.spelling = spelling ?? keyword
        self.arguments = arguments
        self.location = location
        self.rawValue = rawValue
    }
}

/// Something in ssh_config that hostscope read but did not apply, said once at load time.
public struct SSHConfigWarning: Sendable, Hashable, CustomStringConvertible {
    /// The line concerned.
    public var location: SSHConfigLocation
    /// What was not applied and why.
    public var message: String

    /// A warning about a line.
    public init(location: SSHConfigLocation, message: String) {
        self.location = location
        self.message = message
    }

    public var description: String { "\(location): \(message)" }
}

extension SSHError {
    /// A `.config` error that starts with the file and line it is about.
    static func config(_ location: SSHConfigLocation, _ message: String) -> SSHError {
        SSHError(.config, "\(location): \(message)")
    }
}
