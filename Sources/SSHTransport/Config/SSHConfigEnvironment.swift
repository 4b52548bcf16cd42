import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Everything outside the config text that reading and resolving ssh_config depends on: whose home `~` is,
/// who the local user is, the environment for `${VAR}` and `SSH_AUTH_SOCK`, and where files come from.
public struct SSHConfigEnvironment: Sendable {
    /// The home directory: `~`, `%d`, and the base of `~/.ssh` for relative `Include`s.
    public var homeDirectory: String
    /// The local user name: `%u`, and the remote user when nothing sets one.
    public var localUser: String
    /// Environment variables, for `${VAR}`, `IdentityAgent $VAR` and `SSH_AUTH_SOCK`.
    public var variables: [String: String]
    /// Where config files (and `/etc/services`) are read from.
    public var fileSystem: any SSHConfigFileSystem
    /// This machine's host name, for `%l` (and `%L`, its first label); nil makes those tokens an error.
    public var localHostName: String?
    /// The local numeric user id, for `%i`; nil makes that token an error.
    public var userID: UInt32?
    /// The home directory of another local user, for `~user/…`.
    public var homeDirectoryOfUser: @Sendable (String) -> String?

    /// Inputs given explicitly, as tests and embedders do; `current()` reads them from the process.
    public init(
        homeDirectory: String,
        localUser: String,
        variables: [String: String] = [:],
        fileSystem: any SSHConfigFileSystem = LocalSSHConfigFileSystem(),
        localHostName: String? = nil,
        userID: UInt32? = nil,
        homeDirectoryOfUser: @escaping @Sendable (String) -> String? = { _ in nil }
    ) {
        self.homeDirectory = homeDirectory
        self.localUser = localUser
        self.variables = variables
        self.fileSystem = fileSystem
        self.localHostName = localHostName
        self.userID = userID
        self.homeDirectoryOfUser = homeDirectoryOfUser
    }

    /// This process's environment, with `HOME` (when set) as the home directory.
    ///
    /// OpenSSH takes `~` in paths from the password database but `Include`'s `~` from `HOME`; one home
    /// for both keeps the two from disagreeing, and they are the same directory on any ordinary login.
    public static func current() -> SSHConfigEnvironment {
        let variables = ProcessInfo.processInfo.environment
        var home = variables["HOME"] ?? ""
        if home.isEmpty {
            home = FileManager.default.homeDirectoryForCurrentUser.path
        }
        return SSHConfigEnvironment(
            homeDirectory: home,
            localUser: NSUserName(),
            variables: variables,
            fileSystem: LocalSSHConfigFileSystem(),
            localHostName: currentHostName(),
            userID: UInt32(getuid()),
            homeDirectoryOfUser: { FileManager.default.homeDirectory(forUser: $0)?.path }
        )
    }

    private static func currentHostName() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
