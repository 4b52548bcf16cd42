@testable import SSHTransport

/// Config text held in memory; its `Include`s reach one other file and the config itself (a loop OpenSSH
/// stops at its depth limit).
private func environment(config: String) -> SSHConfigEnvironment {
    SSHConfigEnvironment(
        homeDirectory: "/home/fuzz", localUser: "fuzz", variables: ["HOME": "/home/fuzz"],
        fileSystem: InMemorySSHConfigFileSystem([
            "/home/fuzz/.ssh/config": config, "/home/fuzz/.ssh/conf.d/a.conf": "Host *.a\n  Port 2222\n",
        ]),
        localHostName: "fuzzhost", userID: 1000)
}

extension Harness {
    /// ssh_config: parsing, then resolving a few destinations, one of them named by the input's first line.
    static let sshConfig = Harness(name: "ssh-config") { bytes in
        let config = text(bytes)
        guard
            let parsed = try? SSHConfig(
                parsing: config, path: "/home/fuzz/.ssh/config", environment: environment(config: config))
        else { return }
        _ = parsed.directives
        let named = config.split(separator: "\n", maxSplits: 1).first.map { String($0.suffix(40)) } ?? ""
        for host in ["web1", "x.example.com", "10.0.0.1", named] {
            _ = try? parsed.resolve(host: host)
        }
        _ = parsed.hostAliases(matching: "*")
    }

    /// known_hosts and RevokedHostKeys files, read as bytes; the first field picks the host for the line filter.
    static let knownHosts = Harness(name: "known-hosts") { bytes in
        var input = FuzzInput(bytes)
        let host = input.field(limit: 32)
        let file = input.rest()
        for line in KnownHostsFile.parse(file) {
            check(line.number >= 1, "a known_hosts line numbered below 1")
            _ = KnownHostsVerifier.mayName(line.text, host: host)
        }
        if let key = KnownHostsFile.parse(file).compactMap(\.markedKey).first {
            _ = RevokedHostKeys.verdict(on: key, in: file)
        }
        _ = RevokedHostKeys.verdict(on: host, in: file)
    }
}
