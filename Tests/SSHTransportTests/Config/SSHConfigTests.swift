import SSHTransport
import Testing

@Suite struct SSHConfigTests {
    private let sshDirectory = ConfigTest.home + "/.ssh"

    @Test func relativeIncludesLiveInDotSSHAndGlobsReadInSortedOrder() throws {
        let config = try ConfigTest.config(
            "Include conf.d/*.conf\nHost *\n  User fallback\n",
            files: [
                sshDirectory + "/conf.d/b.conf": "Host web1\n  User from-b\n",
                sshDirectory + "/conf.d/a.conf": "Host web1\n  User from-a\n",
                sshDirectory + "/conf.d/notes.txt": "Host web1\n  User from-notes\n",
                sshDirectory + "/conf.d/.hidden.conf": "Host web1\n  User from-hidden\n",
            ])
        #expect(
            config.filePaths == [
                sshDirectory + "/config", sshDirectory + "/conf.d/a.conf", sshDirectory + "/conf.d/b.conf",
            ])
        #expect(try config.resolve(host: "web1").user == "from-a")
    }

    @Test func includesTakeAbsolutePathsHomePathsAndSeveralPatternsPerLine() throws {
        let config = try ConfigTest.config(
            "Include /etc/hosts.d/one ~/extra/two missing-*.conf\n",
            files: ["/etc/hosts.d/one": "Host one\n", ConfigTest.home + "/extra/two": "Host two\n"])
        #expect(config.filePaths.dropFirst() == ["/etc/hosts.d/one", ConfigTest.home + "/extra/two"])
        #expect(config.hostAliases == ["one", "two"])
    }

    @Test func aMissingIncludeIsIgnoredAsOpenSSHDoes() throws {
        let config = try ConfigTest.config("Include nothing-here\nHost web1\n  Port 2200\n")
        #expect(try config.resolve(host: "web1").port == 2200)
    }

    @Test func aFileIncludingItselfStopsAtTheDepthLimit() {
        let error = ConfigTest.error { _ = try ConfigTest.config("Include config\n") }
        #expect(error?.code == .config)
        #expect(error?.message.contains("Include nests more than 16 files deep") == true)
    }

    @Test func sixteenNestedIncludesAreAllowed() throws {
        var files: [String: String] = [:]
        for level in 1...16 {
            files[sshDirectory + "/level\(level)"] = level < 16 ? "Include level\(level + 1)\n" : "Host deepest\n"
        }
        let config = try ConfigTest.config("Include level1\n", files: files)
        #expect(config.hostAliases == ["deepest"])
    }

    @Test func systemFilesIncludeFromEtcSSHAndMayNotUseTilde() throws {
        let environment = ConfigTest.environment(files: [
            "/etc/ssh/ssh_config": "Include ssh_config.d/*.conf\n",
            "/etc/ssh/ssh_config.d/10-site.conf": "Host site\n",
        ])
        #expect(try SSHConfig.load(environment: environment).hostAliases == ["site"])

        let tilde = ConfigTest.environment(files: ["/etc/ssh/ssh_config": "Include ~/.ssh/other\n"])
        let error = ConfigTest.error { _ = try SSHConfig.load(environment: tilde) }
        #expect(error?.message.contains("a system file may not include from ~") == true)
    }

    @Test func theUserFileIsReadBeforeTheSystemFile() throws {
        let environment = ConfigTest.environment(files: [
            sshDirectory + "/config": "Host *\n  User mine\n",
            "/etc/ssh/ssh_config": "Host *\n  User system\n  Port 2022\n",
        ])
        let host = try SSHConfig.load(environment: environment).resolve(host: "web1")
        #expect(host.user == "mine")
        #expect(host.port == 2022)
    }

    @Test func noConfigFilesMeansDefaults() throws {
        let config = try SSHConfig.load(environment: ConfigTest.environment())
        #expect(config.filePaths.isEmpty)
        #expect(try config.resolve(host: "web1").port == 22)
    }

    @Test func anExplicitConfigFileIsTheOnlyOneReadAndMustExist() throws {
        let environment = ConfigTest.environment(files: [
            sshDirectory + "/config": "Host *\n  User mine\n", "/tmp/other": "Host *\n  User other\n",
        ])
        let config = try SSHConfig.load(environment: environment, configFile: "/tmp/other")
        #expect(try config.resolve(host: "x").user == "other")

        let error = ConfigTest.error { _ = try SSHConfig.load(environment: environment, configFile: "~/nope") }
        #expect(error?.code == .config)
        #expect(error?.message == "the config file ~/nope does not exist; check the path")
    }

    @Test func configTextCanBeParsedFromMemory() throws {
        let config = try SSHConfig(
            parsing: "Host mem\n  HostName 10.0.0.9\n", path: "inline", environment: ConfigTest.environment())
        #expect(try config.resolve(host: "mem").hostName == "10.0.0.9")
        #expect(config.directives.map(\.location.description) == ["inline line 1", "inline line 2"])
    }

    @Test func windowsLineEndingsReadLikeUnixOnes() throws {
        let config = try ConfigTest.config("Host web1\r\n  User crlf\r\n\r\n  Port 2200\r\n")
        let host = try config.resolve(host: "web1")
        #expect(host.user == "crlf")
        #expect(host.origins["port"]?.line == 4)
    }

    @Test func aMisspeltKeywordStopsResolutionAsItStopsSSH() throws {
        let config = try ConfigTest.config("Host web1\n  Hostnme typo.example.com\n")
        #expect(config.warnings.isEmpty)
        let error = ConfigTest.error { _ = try config.resolve(host: "other") }
        #expect(error?.code == .config)
        #expect(
            error?.message
                == sshDirectory + "/config line 2: Bad configuration option \"Hostnme\": it is not an ssh_config "
                + "keyword, and ssh stops here too; correct its spelling, or name it in an IgnoreUnknown line before "
                + "it if another program reads it")
    }

    @Test func ignoreUnknownCoversKeywordsAfterItAsSSHReadsIt() throws {
        let covered = try ConfigTest.config("IgnoreUnknown UseKeychain,add*\nUseKeychain yes\nAddFoo 1\n")
        #expect(try covered.resolve(host: "x").hostName == "x")
        // Only an IgnoreUnknown before the line counts, only in a block that applies, and only the first.
        let cases = [
            "UseKeychain yes\nIgnoreUnknown UseKeychain\n",
            "Host other\n  IgnoreUnknown UseKeychain\nHost *\n  UseKeychain yes\n",
            "IgnoreUnknown Foo\nIgnoreUnknown UseKeychain\nUseKeychain yes\n",
        ]
        for text in cases {
            let error = ConfigTest.error { _ = try ConfigTest.resolve("x", in: text) }
            #expect(error?.message.contains("Bad configuration option \"UseKeychain\"") == true, "\(text)")
        }
        #expect(ConfigTest.error { _ = try ConfigTest.config("IgnoreUnknown a b\n") }?.code == .config)
    }

    @Test func keywordsSSHKnowsButHostscopeDoesNotUseAreReadSilently() throws {
        let config = try ConfigTest.config(
            "ForwardAgent yes\nControlMaster auto\nProtocol 2\nUseRoaming no\nTag prod\nChannelTimeout session=5m\n")
        #expect(config.warnings.isEmpty)
        #expect(try config.resolve(host: "x").otherDirective("controlmaster")?.arguments == ["auto"])
    }

    @Test func keywordsSSHNoLongerSupportsAreReportedOnceAsSSHReportsThem() throws {
        let config = try ConfigTest.config("Host a\n  RSAAuthentication yes\nHost b\n  CompressionLevel 6\n")
        #expect(config.warnings.map(\.location.line) == [2, 4])
        #expect(
            config.warnings.first?.message == "\"RSAAuthentication\" is no longer supported by ssh, which ignores it "
                + "too; remove it")
        #expect(try config.resolve(host: "a").port == 22)
    }

    @Test func proxyJumpAndProxyCommandSettleAsInSSH() throws {
        let text = """
            Host j1
                ProxyJump admin@bastion:2222
            Host j2
                ProxyCommand ssh -W %h:%p gw
            Host j3
                ProxyJump none
            Host j4
                ProxyCommand None
            Host *
                ProxyJump late
                ProxyCommand after-none
            """
        let j1 = try ConfigTest.resolve("j1", in: text)
        #expect(j1.proxy == SSHProxy(kind: .jump, value: "admin@bastion:2222", origin: j1.proxy?.origin))
        #expect(j1.proxy?.origin?.line == 2)
        #expect(try ConfigTest.resolve("j2", in: text).proxy?.value == "ssh -W %h:%p gw")
        #expect(try ConfigTest.resolve("j2", in: text).proxy?.kind == .command)
        // `ProxyJump none` leaves room for a later ProxyCommand; `ProxyCommand none` for nothing.
        #expect(try ConfigTest.resolve("j3", in: text).proxy?.value == "after-none")
        #expect(try ConfigTest.resolve("j4", in: text).proxy == nil)
        #expect(try ConfigTest.resolve("other", in: text).proxy?.value == "late")
        #expect(try ConfigTest.resolve("x", in: "ProxyJump none\n").proxy == nil)
    }

    @Test func directivesListEveryLineInReadingOrder() throws {
        let config = try ConfigTest.config(
            "Host a !b\n  Include inc\nPort 2\n", files: [sshDirectory + "/inc": "User u\n"])
        #expect(config.directives.map(\.keyword) == ["host", "include", "user", "port"])
        #expect(config.directives[0].arguments == ["a", "!b"])
        #expect(config.directives[2].location == SSHConfigLocation(file: sshDirectory + "/inc", line: 1))
    }

    @Test(arguments: [
        ("Port abc", "Port \"abc\" is not a port; write a number from 1 to 65535"),
        ("Port 0", "Port \"0\" is not a port; write a number from 1 to 65535"),
        ("Port 65536", "Port \"65536\" is not a port; write a number from 1 to 65535"),
        ("Port 22 23", "Port takes one value but has 2; quote a value that contains spaces"),
        ("User \"\"", "User has an empty value; give it one"),
        ("ConnectTimeout 5x", "ConnectTimeout \"5x\" is not a time; write seconds (30) or units (1m30s, 2h)"),
        ("ServerAliveInterval -1", "ServerAliveInterval \"-1\" is not a time; write seconds (30) or units (1m30s, 2h)"),
        ("ServerAliveCountMax many", "ServerAliveCountMax \"many\" is not a whole number; write one, like 3"),
        ("IdentitiesOnly maybe", "IdentitiesOnly \"maybe\" is not valid; write yes or no"),
        (
            "StrictHostKeyChecking sometimes",
            "StrictHostKeyChecking \"sometimes\" is not valid; write yes, accept-new, no, off or ask"
        ),
        ("UserKnownHostsFile a none", "UserKnownHostsFile \"none\" must stand alone on its line"),
        (
            "IdentityAgent $9bad",
            "IdentityAgent \"$9bad\" does not name an environment variable; write $NAME or ${NAME}"
        ),
        ("IdentityAgent ${SOCK", "IdentityAgent \"${SOCK\": \"${\" has no closing \"}\""),
        ("Host \"\"", "Host has an empty pattern; remove it"),
    ])
    func invalidValuesAreErrorsNamingFileLineAndFixEvenInBlocksThatDoNotApply(line: String, message: String) {
        let error = ConfigTest.error { _ = try ConfigTest.config("Host elsewhere\n\n  \(line)\n") }
        #expect(error?.code == .config)
        #expect(error?.message == "\(sshDirectory)/config line 3: \(message)")
    }

    @Test func portsMayBeServiceNamesAsGetservbynameReadsThem() throws {
        let services = "# services\nssh\t\t22/tcp\nsshalt\t2222/udp\nalt-ssh\t2200/tcp\tssh-alt # local\n"
        let config = try ConfigTest.config(
            "Host a\n  Port ssh\nHost b\n  Port ssh-alt\n", files: ["/etc/services": services])
        #expect(try config.resolve(host: "a").port == 22)
        #expect(try config.resolve(host: "b").port == 2200)
        let error = ConfigTest.error {
            _ = try ConfigTest.config("Port sshalt\n", files: ["/etc/services": services])
        }
        #expect(error?.message.contains("Port \"sshalt\" is not a port") == true)
    }

    @Test func hostAliasesAreTheConcreteNamesOnHostLinesOnce() throws {
        let config = try ConfigTest.config(
            "Host web1 web2 *.internal !db-old\nHost db-1 db-2 db-old\nHost *\nHost web1\nInclude more\n",
            files: [sshDirectory + "/more": "Host db-3 db-?\n"])
        #expect(config.hostAliases == ["web1", "web2", "db-1", "db-2", "db-old", "db-3"])
        #expect(config.hostAliases(matching: "db-*") == ["db-1", "db-2", "db-old", "db-3"])
        #expect(config.hostAliases(matching: "db-*,!db-old") == ["db-1", "db-2", "db-3"])
        #expect(config.hostAliases(matching: "cache-*").isEmpty)
    }

    @Test func algorithmListsTakeTheirFirstValueAndRememberTheirLine() throws {
        let host = try ConfigTest.resolve(
            "web1",
            in: "Host web1\n  Ciphers ^aes256-ctr\n  MACs hmac-sha2-512\nHost *\n  Ciphers aes128-ctr\n"
                + "  KexAlgorithms -diffie-hellman-group1-sha1\n")
        #expect(host.algorithms.ciphers == "^aes256-ctr")
        #expect(host.algorithms.macs == "hmac-sha2-512")
        #expect(host.algorithms.kexAlgorithms == "-diffie-hellman-group1-sha1")
        #expect(host.algorithms.hostKeyAlgorithms == nil)
        #expect(host.algorithms.sources[.cipher]?.hasSuffix("config line 2") == true)
        #expect(!host.otherDirectives.contains { $0.keyword == "ciphers" })
    }

    @Test func anAlgorithmListWithAnEmptyNameIsRefusedWithItsLine() {
        let error = ConfigTest.error { _ = try ConfigTest.config("Host *\n  MACs hmac-sha2-256,,hmac-sha1\n") }
        #expect(error?.code == .config)
        #expect(error?.message.contains("line 2") == true)
        #expect(error?.message.contains("has an empty name") == true)
    }
}
