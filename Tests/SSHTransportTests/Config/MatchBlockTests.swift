import Foundation
import SSHTransport
import Testing

/// `Match` blocks as OpenSSH 9.2's `match_cfg_line` evaluates them; OpenSSHAgreementTests checks the same
/// kinds of files against `ssh -G` itself.
@Suite struct MatchBlockTests {
    @Test func aMatchHostUserBlockAppliesOnlyWhenBothHold() throws {
        let text = """
            Match host 10.0.0.5 user deploy
                Port 2222
                IdentityFile ~/.ssh/deploy
            Host *
                IdentityFile ~/.ssh/default
            """
        let both = try ConfigTest.resolve("deploy@10.0.0.5", in: text)
        #expect(both.port == 2222)
        #expect(both.identityFiles.map(\.configured) == ["~/.ssh/deploy", "~/.ssh/default"])
        #expect(both.origins["port"]?.line == 2)
        let otherUser = try ConfigTest.resolve("root@10.0.0.5", in: text)
        #expect(otherUser.port == 22)
        #expect(otherUser.identityFiles.map(\.configured) == ["~/.ssh/default"])
        #expect(try ConfigTest.resolve("deploy@10.0.0.6", in: text).port == 22)
        let byOption = try ConfigTest.resolve("10.0.0.5", in: text, overrides: SSHConnectionOverrides(user: "deploy"))
        #expect(byOption.port == 2222)
    }

    @Test func matchHostSeesHostNameAfterSubstitutionAndOriginalHostTheNameGiven() throws {
        let text = """
            Match host web1
                ServerAliveInterval 5
            Host web1
                HostName %h.Example.COM
            Match host web1
                IdentityFile ~/.ssh/not-after-hostname
            Match host WEB1.example.com
                User by-hostname
            Match originalhost Web1
                Port 2201
            """
        let host = try ConfigTest.resolve("web1", in: text)
        #expect(host.serverAliveInterval == .seconds(5))
        #expect(host.user == "by-hostname")
        #expect(host.port == 2201)
        #expect(host.identityFiles.allSatisfy { $0.isDefault })
        #expect(host.hostName == "web1.example.com")
    }

    @Test func matchUserSeesTheRemoteUserResolvedSoFar() throws {
        let text = """
            Host a
                User early
            Match user early
                Port 1111
            Match user late
                Port 2222
            Host *
                User late
            """
        let a = try ConfigTest.resolve("a", in: text)
        #expect(a.user == "early")
        #expect(a.port == 1111)
        // `User late` comes after the Match line, which still sees the local user.
        let b = try ConfigTest.resolve("b", in: text)
        #expect(b.user == "late")
        #expect(b.port == 22)
        #expect(try ConfigTest.resolve("late@b", in: text).port == 2222)
    }

    @Test func negationCommaListsAndLocalUserCombine() throws {
        let text = """
            Match localuser alice,bob !host db-old
                User from-localuser
            Match !localuser alice
                Port 1
            Match host db-*,!db-old
                Port 5432
            Match user "Alice"
                ConnectTimeout 9
            """
        let current = try ConfigTest.resolve("db-1", in: text)
        #expect(current.user == "from-localuser")
        #expect(current.port == 5432)
        let old = try ConfigTest.resolve("db-old", in: text)
        #expect(old.user == "alice")
        #expect(old.port == 22)
        // `user` compares case and all, unlike `host`.
        #expect(old.connectTimeout == nil)
    }

    @Test func matchAllAppliesAloneAndCanonicalAllOnlyOnTheFinalPass() throws {
        let text = """
            Match all
                User everyone
            Match canonical all
                Port 1
            Match !all
                ConnectTimeout 1
            """
        let host = try ConfigTest.resolve("web1", in: text)
        #expect(host.user == "everyone")
        #expect(host.port == 22)
        #expect(host.connectTimeout == nil)
    }

    @Test func matchFinalReadsTheFilesAgainAgainstTheNameConnectedTo() throws {
        let text = """
            Host web1
                HostName Web1.Example.com
            Host web1.example.com
                User from-second-pass
                Port 2200
            Match final
                IdentityFile ~/.ssh/final_%h
            Match canonical host web1.example.com
                ServerAliveInterval 9
            Host Beta
                Port 2400
            Host beta
                User lower-case-on-the-second-pass
            """
        let host = try ConfigTest.resolve("web1", in: text)
        #expect(host.user == "from-second-pass")
        #expect(host.port == 2200)
        #expect(host.identityFiles.map(\.configured) == ["~/.ssh/final_%h"])
        #expect(host.identityFiles.map(\.path) == [ConfigTest.home + "/.ssh/final_web1.example.com"])
        #expect(host.serverAliveInterval == .seconds(9))
        #expect(host.hostName == "web1.example.com")
        // The first pass matches `Host` against the name as typed, case and all; the second against it
        // lower-cased; what the first pass set stays.
        let beta = try ConfigTest.resolve("Beta", in: text)
        #expect(beta.port == 2400)
        #expect(beta.user == "lower-case-on-the-second-pass")

        let withoutFinal = try ConfigTest.resolve(
            "web1", in: text.replacingOccurrences(of: "Match final", with: "Host x"))
        #expect(withoutFinal.user == "alice")
        #expect(withoutFinal.port == 22)
        #expect(withoutFinal.serverAliveInterval == .zero)
    }

    @Test func aFinalInABlockThatNeverAppliesStillAsksForTheSecondPass() throws {
        // OpenSSH 9.2 evaluates every Match line and asks for the final pass on any `final`, negated too.
        let text = "Match host nothing-like-it !final\nHost web1.lan\n  Port 2022\n"
        #expect(try ConfigTest.resolve("WEB1.lan", in: text).port == 2022)
    }

    @Test func canonicalizeHostnameAsksForTheSecondPassAndIsReportedAsNotApplied() throws {
        let text = "Match canonical\n  Port 2100\nHost *\n  CanonicalizeHostname yes\n"
        let config = try ConfigTest.config(text)
        #expect(config.warnings.map(\.location.line) == [4])
        #expect(config.warnings.first?.message.contains("CanonicalizeHostname is not applied") == true)
        #expect(try config.resolve(host: "web1").port == 2100)
        let off = try ConfigTest.config("Match canonical\n  Port 2100\nHost *\n  CanonicalizeHostname no\n")
        #expect(off.warnings.isEmpty)
        #expect(try off.resolve(host: "web1").port == 22)
    }

    @Test func matchExecIsRefusedWhereItDecidesNamingTheFileAndLine() throws {
        let text = "Host *\n  User u\nMatch exec \"test -f ~/.vpn-up\"\n  Port 1\n"
        let error = ConfigTest.error { _ = try ConfigTest.resolve("web1", in: text) }
        #expect(error?.code == .config)
        #expect(
            error?.message.hasPrefix(ConfigTest.home + "/.ssh/config line 3: Match exec \"test -f ~/.vpn-up\"") == true)
        #expect(error?.message.contains("runs no commands from ssh_config") == true)
    }

    @Test func matchExecIsNoObstacleWhereAnotherCriterionAlreadyFails() throws {
        let text = """
            Match host db-* exec "vpn-check"
                Port 1
            Match !exec "vpn-check" host db-*
                Port 2
            Host web1
                Port 2200
            """
        #expect(try ConfigTest.resolve("web1", in: text).port == 2200)
        #expect(ConfigTest.error { _ = try ConfigTest.resolve("db-1", in: text) }?.message.contains("line 1") == true)
    }

    @Test(arguments: [
        ("localnetwork 10.0.0.0/8", "does not look at this machine's network addresses"),
        ("tagged prod", "does not apply Tag"),
        ("exec=true", "runs no commands"),
    ])
    func otherCriteriaOpenSSHEvaluatesAreRefusedToo(criterion: String, reason: String) throws {
        let error = ConfigTest.error {
            _ = try ConfigTest.resolve("web1", in: "Match host web1 \(criterion)\n  Port 1\n")
        }
        #expect(error?.code == .config)
        #expect(error?.message.contains("line 1") == true)
        #expect(error?.message.contains(reason) == true)
    }

    @Test(arguments: [
        ("Match all host web1\n", "cannot be combined"),
        ("Match host\n", "Match host needs a value"),
        ("Match hots web1\n", "\"hots\" is not a Match criterion"),
        ("Match # only a comment\n", "Match needs a criterion"),
        ("Match user \"\"\n", "Match user needs a value"),
    ])
    func badMatchLinesStopTheFileFromLoadingAsInSSH(text: String, message: String) {
        // A bad condition is an error for every host, even in a block no host reaches.
        let error = ConfigTest.error { _ = try ConfigTest.config("Host nothing\n" + text) }
        #expect(error?.code == .config)
        #expect(error?.message.contains("config line 2") == true)
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
    }

    @Test func aMatchInsideAnIncludeFromABlockThatDoesNotApplyNeverApplies() throws {
        let files = [ConfigTest.home + "/.ssh/inc": "Match all\n  User from-include\n"]
        let host = try ConfigTest.resolve("web1", in: "Host other\n  Include inc\n", files: files)
        #expect(host.user == "alice")
        #expect(try ConfigTest.resolve("other", in: "Host other\n  Include inc\n", files: files).user == "from-include")
    }
}
