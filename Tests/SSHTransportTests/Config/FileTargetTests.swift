import SSHTransport
import Testing

@Suite struct FileTargetTests {
    private static func remote(_ host: String, user: String? = nil, port: Int? = nil) -> HostTarget {
        .remote(SSHDestination(host: host, user: user, port: port))
    }

    @Test(
        arguments: [
            ("web1:/var/log", remote("web1"), "/var/log"),
            ("web1:", remote("web1"), "."),
            ("deploy@db1:relative/path", remote("db1", user: "deploy"), "relative/path"),
            ("[::1]:/path", remote("::1"), "/path"),
            ("root@[fe80::1%eth0]:/srv", remote("fe80::1%eth0", user: "root"), "/srv"),
            ("web1:/a:b", remote("web1"), "/a:b"),
            ("web1:2222/x", remote("web1"), "2222/x"),
            ("local:/etc", HostTarget.local, "/etc"),
            ("/var/log", HostTarget.local, "/var/log"),
            ("relative/file", HostTarget.local, "relative/file"),
            ("./web1:/x", HostTarget.local, "./web1:/x"),
            ("dir/web1:x", HostTarget.local, "dir/web1:x"),
            (":leading", HostTarget.local, ":leading"),
            ("sftp://deploy@web1:2200/var/log", remote("web1", user: "deploy", port: 2200), "/var/log"),
            ("sftp://web1/~/notes/a%20b.txt", remote("web1"), "notes/a b.txt"),
            ("sftp://web1", remote("web1"), "."),
            ("sftp://web1/", remote("web1"), "/"),
            ("sftp://[::1]:2222/%E2%82%AC+1", remote("::1", port: 2222), "/€+1"),
            ("sftp://m%C3%BCller@web1/x", remote("web1", user: "müller"), "/x"),
        ] as [(String, HostTarget, String)])
    func scpAndSftpFormsSplitIntoHostAndPath(argument: String, host: HostTarget, path: String) throws {
        let target = try FileTarget(parsing: argument)
        #expect(target.host == host)
        #expect(target.path == path)
    }

    @Test(arguments: [
        ("@web1:/x", "the user before \"@\" is empty; write USER@HOST or leave out the \"@\""),
        ("we b:/x", "the host name contains \" \""),
        ("sftp://web1/%C3%28", "its percent-encoded bytes are not UTF-8 text"),
        ("sftp://web1:port/x", "the port \"port\" is not a number from 1 to 65535"),
    ])
    func malformedTargetsSayWhatIsWrong(argument: String, reason: String) {
        let error = ConfigTest.error { _ = try FileTarget(parsing: argument) }
        #expect(error?.code == .config)
        #expect(error?.message == "\"\(argument)\" is not a valid host: \(reason)")
    }

    @Test(arguments: [
        "web1:/var/log", "deploy@db1:rel", "[::1]:/p", "web1:", "/abs", "rel", "./a:b",
        "sftp://me@web1:2200/var/a%20b", "sftp://[::1]:22/~/notes",
    ])
    func theDescriptionParsesBackToTheSameTarget(argument: String) throws {
        let target = try FileTarget(parsing: argument)
        #expect(target.description == argument)
        #expect(try FileTarget(parsing: target.description) == target)
    }

    @Test func aLocalPathThatLooksRemoteIsDescribedSafely() throws {
        let target = FileTarget(host: .local, path: "web1:x")
        #expect(target.description == "./web1:x")
        #expect(try FileTarget(parsing: target.description).host == .local)
    }
}
