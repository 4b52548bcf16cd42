import SSHTransport

/// Environments for ssh_config tests: a made-up user `alice` whose files live in memory, so no test reads
/// the machine's own home.
enum ConfigTest {
    static let home = "/home/alice"

    static func environment(
        files: [String: String] = [:], variables: [String: String] = [:]
    ) -> SSHConfigEnvironment {
        SSHConfigEnvironment(
            homeDirectory: home,
            localUser: "alice",
            variables: variables,
            fileSystem: InMemorySSHConfigFileSystem(files),
            localHostName: "laptop.example.net",
            userID: 1000,
            homeDirectoryOfUser: { $0 == "bob" ? "/home/bob" : nil }
        )
    }

    /// `text` as `~/.ssh/config`, with `files` beside it.
    static func config(
        _ text: String, files: [String: String] = [:], variables: [String: String] = [:]
    ) throws -> SSHConfig {
        var all = files
        all[home + "/.ssh/config"] = text
        return try SSHConfig.load(environment: environment(files: all, variables: variables))
    }

    static func resolve(
        _ host: String, in text: String, files: [String: String] = [:], variables: [String: String] = [:],
        overrides: SSHConnectionOverrides = SSHConnectionOverrides()
    ) throws -> SSHHostConfig {
        try config(text, files: files, variables: variables).resolve(
            SSHDestination(parsing: host), overrides: overrides)
    }

    /// The error `body` throws, for checking its code and message.
    static func error(_ body: () throws -> Void) -> SSHError? {
        do {
            try body()
            return nil
        } catch let error as SSHError {
            return error
        } catch {
            return nil
        }
    }
}
