import SSHTransport
import Testing

@Suite struct SSHDestinationTests {
    @Test(
        arguments: [
            ("web1", "web1", nil, nil),
            ("deploy@web1", "web1", "deploy", nil),
            ("web1:2222", "web1", nil, 2222),
            ("deploy@web1.example.com:2222", "web1.example.com", "deploy", 2222),
            ("[::1]:2222", "::1", nil, 2222),
            ("[::1]", "::1", nil, nil),
            ("root@[fe80::1%eth0]:22", "fe80::1%eth0", "root", 22),
            ("::1", "::1", nil, nil),
            ("root@2001:db8::7", "2001:db8::7", "root", nil),
            ("fe80::1%eth0", "fe80::1%eth0", nil, nil),
            ("a@b@host", "host", "a@b", nil),
            ("192.0.2.4:22", "192.0.2.4", nil, 22),
            ("ssh://deploy@web1:2200", "web1", "deploy", 2200),
            ("ssh://web1/", "web1", nil, nil),
            ("sftp://me%40corp;fingerprint=SHA256-x@[::1]:2222", "::1", "me@corp", 2222),
            ("SSH://WEB1", "WEB1", nil, nil),
        ] as [(String, String, String?, Int?)])
    func everyCommandLineFormParses(argument: String, host: String, user: String?, port: Int?) throws {
        let destination = try SSHDestination(parsing: argument)
        #expect(destination == SSHDestination(host: host, user: user, port: port))
    }

    @Test(arguments: [
        ("web1:", "the port \"\" is not a number from 1 to 65535"),
        ("web1:ssh", "the port \"ssh\" is not a number from 1 to 65535"),
        ("web1:0", "the port \"0\" is not a number from 1 to 65535"),
        ("web1:70000", "the port \"70000\" is not a number from 1 to 65535"),
        ("@web1", "the user before \"@\" is empty; write USER@HOST or leave out the \"@\""),
        ("me@", "the host name is missing"),
        ("", "the host name is missing"),
        ("[::1", "\"[\" has no closing \"]\"; write [ADDRESS]:PORT"),
        ("[::1]2222", "only \":PORT\" may follow \"]\""),
        ("-oProxyCommand=x", "a host name cannot start with \"-\""),
        ("-l@web1", "a user name cannot start with \"-\""),
        ("me;id@web1", "the user name contains \";\""),
        ("my user@web1", "the user name contains \" \""),
        ("web1;reboot", "the host name contains \";\""),
        ("web 1", "the host name contains \" \""),
        ("db-*", "it is a pattern; patterns select Host names from ~/.ssh/config"),
        ("ssh://web1/var/log", "a host takes no path; give paths to `hostscope files`"),
        ("ssh://us%zzer@web1", "\"%\" must be followed by two hex digits; write %25 for \"%\""),
    ])
    func malformedArgumentsSayWhatIsWrong(argument: String, reason: String) {
        let error = ConfigTest.error { _ = try SSHDestination(parsing: argument) }
        #expect(error?.code == .config)
        #expect(error?.message == "\"\(argument)\" is not a valid host: \(reason)")
    }

    @Test(arguments: ["web1", "deploy@web1:2222", "[::1]:2222", "root@[fe80::1%eth0]", "[::1]"])
    func theDescriptionParsesBackToTheSameDestination(argument: String) throws {
        let destination = try SSHDestination(parsing: argument)
        #expect(destination.description == argument)
        #expect(try SSHDestination(parsing: destination.description) == destination)
    }
}
