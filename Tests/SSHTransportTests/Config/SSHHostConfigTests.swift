import SSHTransport
import Testing

@Suite struct SSHHostConfigTests {
    private let home = ConfigTest.home

    @Test func anUnconfiguredHostGetsOpenSSHDefaults() throws {
        let host = try ConfigTest.resolve("Web1", in: "")
        #expect(host.alias == "Web1")
        #expect(host.hostName == "web1")
        #expect(host.user == "alice")
        #expect(host.port == 22)
        #expect(host.hostKeyAlias == nil)
        #expect(
            host.identityFiles.map(\.path) == [
                "\(home)/.ssh/id_ed25519", "\(home)/.ssh/id_ecdsa", "\(home)/.ssh/id_rsa",
            ])
        #expect(host.identityFiles.allSatisfy { $0.isDefault })
        #expect(!host.identitiesOnly)
        #expect(host.userKnownHostsFiles == ["\(home)/.ssh/known_hosts", "\(home)/.ssh/known_hosts2"])
        #expect(host.globalKnownHostsFiles == ["/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"])
        #expect(host.strictHostKeyChecking == .ask)
        #expect(host.connectTimeout == nil)
        #expect(host.serverAliveInterval == .zero)
        #expect(host.serverAliveCountMax == 3)
        #expect(host.identityAgent == .disabled)
        #expect(host.otherDirectives.isEmpty)
        #expect(host.origins.isEmpty)
    }

    @Test func theFirstValueObtainedWinsAndLaterBlocksFillTheRest() throws {
        let text = """
            Host web1
              HostName 192.0.2.10
            Host web*
              HostName ignored.example.com
              User deploy
            Host *
              User nobody
              Port 2222
            """
        let host = try ConfigTest.resolve("web1", in: text)
        #expect(host.hostName == "192.0.2.10")
        #expect(host.user == "deploy")
        #expect(host.port == 2222)
        #expect(host.origins["user"] == SSHConfigLocation(file: "\(home)/.ssh/config", line: 5))
        #expect(host.origins["port"]?.line == 8)
    }

    @Test(arguments: ["Host web* !web-old\n  User x\n", "Host !web-old web*\n  User x\n"])
    func aNegatedMatchExcludesTheBlockWhereverItStands(text: String) throws {
        #expect(try ConfigTest.resolve("web-old", in: text).user == "alice")
        #expect(try ConfigTest.resolve("web-new", in: text).user == "x")
    }

    @Test func aNegatedPatternAloneMatchesNothing() throws {
        #expect(try ConfigTest.resolve("web1", in: "Host !db\n  User x\n").user == "alice")
    }

    @Test func anyOfSeveralPatternsOnALineSelectsTheBlock() throws {
        let text = "Host web1 db? *.example.org\n  Port 2200\n"
        #expect(try ConfigTest.resolve("db7", in: text).port == 2200)
        #expect(try ConfigTest.resolve("x.example.org", in: text).port == 2200)
        #expect(try ConfigTest.resolve("db77", in: text).port == 22)
    }

    @Test func hostPatternsMatchTheNameAsTypedButHostNamesAreLowerCased() throws {
        let text = "Host Web1\n  User upper\n"
        #expect(try ConfigTest.resolve("web1", in: text).user == "alice")
        let host = try ConfigTest.resolve("Web1", in: text)
        #expect(host.user == "upper")
        #expect(host.hostName == "web1")
    }

    @Test func addressesKeepTheirCase() throws {
        #expect(try ConfigTest.resolve("[FE80::1%Eth0]", in: "").hostName == "FE80::1%Eth0")
        #expect(try ConfigTest.resolve("x", in: "HostName FE80::A\n").hostName == "FE80::A")
    }

    @Test func hostNameExpandsPercentHAndDoublePercentOnly() throws {
        #expect(try ConfigTest.resolve("Web1", in: "HostName %h.Internal\n").hostName == "web1.internal")
        // A `%` left in the result makes it look like a scoped address, which `ssh` does not lower-case.
        #expect(try ConfigTest.resolve("Web1", in: "HostName %h.Internal%%\n").hostName == "Web1.Internal%")
        let error = ConfigTest.error { _ = try ConfigTest.resolve("web1", in: "HostName %h.%d\n") }
        #expect(error?.code == .config)
        #expect(
            error?.message.hasSuffix("line 1: HostName \"%h.%d\": %d is not a known token; write %% for a percent sign")
                == true)
    }

    @Test func identityFilesAccumulateAcrossBlocksWithoutDuplicates() throws {
        let text = """
            Host web1
              IdentityFile ~/.ssh/web1
              IdentityFile "~/keys/with space"
            Host *
              IdentityFile ~/.ssh/web1
              IdentityFile ~/.ssh/everyone
            """
        let host = try ConfigTest.resolve("web1", in: text)
        #expect(host.identityFiles.map(\.configured) == ["~/.ssh/web1", "~/keys/with space", "~/.ssh/everyone"])
        #expect(
            host.identityFiles.map(\.path) == [
                "\(home)/.ssh/web1", "\(home)/keys/with space", "\(home)/.ssh/everyone",
            ])
        #expect(!host.identityFiles.contains { $0.isDefault })
        #expect(host.origins["identityfile"]?.line == 2)
    }

    @Test func identityFileNoneIsDroppedAndStillTurnsTheDefaultsOff() throws {
        #expect(try ConfigTest.resolve("web1", in: "IdentityFile none\n").identityFiles.isEmpty)
        let host = try ConfigTest.resolve("web1", in: "IdentityFile NONE\nIdentityFile /k\n")
        #expect(host.identityFiles.map(\.path) == ["/k"])
    }

    @Test func identityFileTokensExpandAfterHostNameUserAndPortAreKnown() throws {
        let text = """
            Host web1
              HostName Web1.Example.com
              User deploy
              Port 2200
              HostKeyAlias web1-key
              IdentityFile ~/.ssh/%h_%r_%u_%p
              IdentityFile %d/%n-%k-%l-%L-%i-100%%
              IdentityFile ~bob/shared/${TEAM}_key
              IdentityFile ~/id
            """
        let host = try ConfigTest.resolve("web1", in: text, variables: ["TEAM": "ops"])
        #expect(
            host.identityFiles.map(\.path) == [
                "\(home)/.ssh/web1.example.com_deploy_alice_2200",
                "\(home)/web1-web1-key-laptop.example.net-laptop-1000-100%",
                "/home/bob/shared/ops_key",
                "\(home)/id",
            ])
        #expect(host.hostKeyAlias == "web1-key")
    }

    @Test(arguments: [
        ("IdentityFile ~/%x", "IdentityFile \"~/%x\": %x is not a known token; write %% for a percent sign"),
        ("IdentityFile ~/k%", "IdentityFile \"~/k%\": a \"%\" ends the value; write %% for a percent sign"),
        (
            "IdentityFile ~/%C",
            "IdentityFile \"~/%C\": %C (the connection hash) is not supported; use %h, %p and %r instead"
        ),
        (
            "IdentityFile ${NOPE}/k",
            "IdentityFile \"${NOPE}/k\": the environment variable NOPE is not set; set it or change the path"
        ),
        ("IdentityFile ~carol/k", "IdentityFile \"~carol/k\": \"~carol\" names no local user"),
        (
            "UserKnownHostsFile ~/%Z",
            "UserKnownHostsFile \"~/%Z\": %Z is not a known token; write %% for a percent sign"
        ),
    ])
    func badTokensAreErrorsNamingTheLine(line: String, message: String) {
        let error = ConfigTest.error { _ = try ConfigTest.resolve("web1", in: "Host web1\n  \(line)\n") }
        #expect(error?.code == .config)
        #expect(error?.message == "\(home)/.ssh/config line 2: \(message)")
    }

    @Test func userKnownHostsFilesTakeSeveralFilesWithTokensAndTheFirstLineWins() throws {
        let text = """
            Host web1
              UserKnownHostsFile ~/.ssh/kh_%h_%p "/srv/known hosts" %d/kh
            Host *
              UserKnownHostsFile /never
            """
        let host = try ConfigTest.resolve("web1", in: text)
        #expect(host.userKnownHostsFiles == ["\(home)/.ssh/kh_web1_22", "/srv/known hosts", "\(home)/kh"])
    }

    @Test func userKnownHostsFileNoneMeansNoFile() throws {
        let host = try ConfigTest.resolve("web1", in: "UserKnownHostsFile none\nGlobalKnownHostsFile None\n")
        #expect(host.userKnownHostsFiles.isEmpty)
        #expect(host.globalKnownHostsFiles.isEmpty)
    }

    @Test(arguments: [
        ("yes", StrictHostKeyChecking.yes), ("TRUE", .yes), ("no", .no), ("off", .no), ("false", .no),
        ("ask", .ask), ("Accept-New", .acceptNew),
    ])
    func strictHostKeyCheckingTakesOpenSSHsSpellings(value: String, expected: StrictHostKeyChecking) throws {
        #expect(try ConfigTest.resolve("h", in: "StrictHostKeyChecking \(value)\n").strictHostKeyChecking == expected)
    }

    @Test func timesTakeUnitsAndNoneLeavesTheOptionOpenForALaterLine() throws {
        let text = """
            Host web1
              ConnectTimeout none
              ServerAliveInterval 1m30s
              ServerAliveCountMax 5
            Host *
              ConnectTimeout 2h
              ServerAliveInterval 10
            """
        let host = try ConfigTest.resolve("web1", in: text)
        #expect(host.connectTimeout == .seconds(7200))
        #expect(host.serverAliveInterval == .seconds(90))
        #expect(host.serverAliveCountMax == 5)
        #expect(try ConfigTest.resolve("x", in: "ConnectTimeout none\n").connectTimeout == nil)
    }

    @Test func identitiesOnlyIsAFlag() throws {
        #expect(try ConfigTest.resolve("h", in: "IdentitiesOnly yes\n").identitiesOnly)
        #expect(try !ConfigTest.resolve("h", in: "IdentitiesOnly no\nIdentitiesOnly yes\n").identitiesOnly)
    }

    @Test(arguments: [
        ("", IdentityAgent.socket("/run/agent.sock")),
        ("IdentityAgent SSH_AUTH_SOCK\n", .socket("/run/agent.sock")),
        ("IdentityAgent none\n", .disabled),
        ("IdentityAgent $OTHER_SOCK\n", .socket("/run/other.sock")),
        ("IdentityAgent $UNSET_SOCK\n", .disabled),
        ("IdentityAgent ${XDG_RUNTIME_DIR}/agent-%i\n", .socket("/run/user/1000/agent-1000")),
        ("IdentityAgent ~/.agent/%h.sock\n", .socket("\(ConfigTest.home)/.agent/h.sock")),
    ])
    func identityAgentFollowsTheEnvironmentUnlessConfigured(line: String, expected: IdentityAgent) throws {
        let variables = [
            "SSH_AUTH_SOCK": "/run/agent.sock", "OTHER_SOCK": "/run/other.sock", "XDG_RUNTIME_DIR": "/run/user/1000",
        ]
        #expect(try ConfigTest.resolve("h", in: line, variables: variables).identityAgent == expected)
    }

    @Test func anEmptySSHAuthSockMeansNoAgent() throws {
        #expect(try ConfigTest.resolve("h", in: "", variables: ["SSH_AUTH_SOCK": ""]).identityAgent == .disabled)
    }

    @Test func theDestinationsUserAndPortBeatTheCommandLineWhichBeatsTheConfig() throws {
        let text = "Host web1\n  User config-user\n  Port 2200\n"
        let overrides = SSHConnectionOverrides(user: "flag-user", port: 2300)
        let fromFlags = try ConfigTest.resolve("web1", in: text, overrides: overrides)
        #expect(fromFlags.user == "flag-user")
        #expect(fromFlags.port == 2300)
        #expect(fromFlags.origins["user"] == nil)
        let fromDestination = try ConfigTest.resolve("root@web1:2400", in: text, overrides: overrides)
        #expect(fromDestination.user == "root")
        #expect(fromDestination.port == 2400)
        let fromConfig = try ConfigTest.resolve("web1", in: text)
        #expect(fromConfig.user == "config-user")
        #expect(fromConfig.port == 2200)
    }

    @Test func commandLineIdentitiesComeFirstAndConfiguredOnesFollowAsWithSSHDashI() throws {
        let overrides = SSHConnectionOverrides(identityFiles: ["~/cli_%r"])
        let host = try ConfigTest.resolve("root@web1", in: "IdentityFile ~/.ssh/cfg\n", overrides: overrides)
        #expect(host.identityFiles.map(\.path) == ["\(home)/cli_root", "\(home)/.ssh/cfg"])
    }

    @Test func commandLineKnownHostsStrictnessAndTimeoutReplaceTheConfigs() throws {
        let text = "UserKnownHostsFile /cfg\nStrictHostKeyChecking yes\nConnectTimeout 30\n"
        let overrides = SSHConnectionOverrides(
            userKnownHostsFiles: ["~/kh"], strictHostKeyChecking: .acceptNew, connectTimeout: .seconds(4))
        let host = try ConfigTest.resolve("web1", in: text, overrides: overrides)
        #expect(host.userKnownHostsFiles == ["\(home)/kh"])
        #expect(host.strictHostKeyChecking == .acceptNew)
        #expect(host.connectTimeout == .seconds(4))
    }

    @Test func anIncludeInABlockThatDoesNotApplyAppliesNothingEvenUnderHostStar() throws {
        let files = [ConfigTest.home + "/.ssh/inc": "User from-include\nHost *\n  Port 2999\n"]
        let host = try ConfigTest.resolve("web1", in: "Host db1\n  Include inc\n", files: files)
        #expect(host.user == "alice")
        #expect(host.port == 22)
    }

    @Test func anIncludeInABlockThatAppliesStartsActiveAndLeavesTheBlockActive() throws {
        let files = [ConfigTest.home + "/.ssh/inc": "User from-include\nHost other\n  Port 2999\n"]
        let text = "Host web1\n  Include inc\n  IdentitiesOnly yes\n"
        let host = try ConfigTest.resolve("web1", in: text, files: files)
        #expect(host.user == "from-include")
        #expect(host.port == 22)
        #expect(host.identitiesOnly)
    }

    @Test func revokedHostKeysFilesExpandLikeKnownHostsFilesAndNoneMeansNone() throws {
        let text = "Host web1\n  RevokedHostKeys ~/.ssh/revoked_%h /etc/ssh/revoked\nHost *\n  RevokedHostKeys none\n"
        let host = try ConfigTest.resolve("web1", in: text)
        #expect(host.revokedHostKeysFiles == [ConfigTest.home + "/.ssh/revoked_web1", "/etc/ssh/revoked"])
        #expect(host.origins["revokedhostkeys"]?.line == 2)
        #expect(try ConfigTest.resolve("db1", in: text).revokedHostKeysFiles.isEmpty)
        #expect(try ConfigTest.resolve("db1", in: "").revokedHostKeysFiles.isEmpty)
    }

    @Test func matchAllAppliesAndAMatchThatDoesNotHoldDoesNot() throws {
        let text = "Host db1\nMatch all\n  User everyone\nMatch host db*\n  Port 1\n"
        let host = try ConfigTest.resolve("web1", in: text)
        #expect(host.user == "everyone")
        #expect(host.port == 22)
    }

    @Test func directivesHostscopeDoesNotApplyAreKeptForTheHostTheyApplyTo() throws {
        let text = "Host web1\n  ForwardAgent yes\n  SendEnv LANG\nHost *\n  ForwardAgent no\n"
        let host = try ConfigTest.resolve("web1", in: text)
        #expect(host.otherDirectives.map(\.keyword) == ["forwardagent", "sendenv", "forwardagent"])
        #expect(host.otherDirective("ForwardAgent")?.arguments == ["yes"])
        #expect(try ConfigTest.resolve("db1", in: text).otherDirective("sendenv") == nil)
    }
}
