import SSHTransport
import Testing

/// How `ProxyJump`, `ProxyCommand` and `-J` become a route, without connecting anything.
@Suite struct SSHRouteResolutionTests {
    private let path = ConfigTest.home + "/.ssh/config"

    @Test func aJumpListIsReachedThroughItsLastHostWhichTheEarlierOnesReach() throws {
        let config = try ConfigTest.config(
            """
            Host web1
                HostName 10.0.1.5
                ProxyJump admin@gw:2201,inner-gw
            Host inner-gw
                HostName 10.0.0.9
                User ops
                ProxyJump ignored-because-the-list-decides
            Host gw
                HostName 192.0.2.7
                Port 22
                User nobody
            """)
        let web1 = try config.connection("web1")
        #expect(web1.hostName == "10.0.1.5")
        let last = try #require(web1.route.hop)
        // The last hop, with its own block, reached through the hops before it instead of its own ProxyJump.
        #expect(last.displayName == "inner-gw")
        #expect(last.hostName == "10.0.0.9")
        #expect(last.user == "ops")
        let first = try #require(last.route.hop)
        // The list's user and port win over the hop's block, as `ssh -l admin -p 2201 gw` would have them.
        #expect(first.displayName == "admin@gw:2201")
        #expect(first.hostName == "192.0.2.7")
        #expect(first.user == "admin")
        #expect(first.port == 2201)
        #expect(first.route.isDirect)
        #expect(web1.route.jumpHosts.map(\.displayName) == ["admin@gw:2201", "inner-gw"])
    }

    @Test func theFirstHopFollowsItsOwnProxyJumpAndProxyCommand() throws {
        let config = try ConfigTest.config(
            """
            Host deep
                ProxyJump mid
            Host mid
                ProxyJump edge
            Host edge
                ProxyCommand nc -X connect -x proxy.example:3128 %h %p
            """)
        let deep = try config.connection("deep")
        let mid = try #require(deep.route.hop)
        let edge = try #require(mid.route.hop)
        #expect(edge.displayName == "edge")
        #expect(edge.route.command?.command == "nc -X connect -x proxy.example:3128 edge 22")
    }

    @Test func matchBlocksAreEvaluatedForEachJumpHostWithItsOwnNameAndUser() throws {
        let config = try ConfigTest.config(
            """
            Host web1
                ProxyJump admin@gw
            Match originalhost gw user admin
                HostName 192.0.2.7
                Port 2201
            Match originalhost gw
                Port 1
            Match originalhost web1
                HostName 10.0.1.5
            Match host 192.0.2.7
                IdentityFile /keys/gw
            """)
        let web1 = try config.connection("web1")
        #expect(web1.hostName == "10.0.1.5" && web1.port == 22)
        #expect(!web1.identityFiles.contains("/keys/gw"))
        let gw = try #require(web1.route.hop)
        #expect(gw.hostName == "192.0.2.7")
        #expect(gw.port == 2201)
        #expect(gw.identityFiles.first == "/keys/gw")
    }

    @Test func aMatchExecThatDecidesAJumpHostsBlockFailsThatHostAloneNamingTheLine() throws {
        let config = try ConfigTest.config(
            """
            Host web1
                ProxyJump gw
            Match originalhost gw exec "test -f ~/.vpn-up"
                HostName 192.0.2.7
            """)
        let problem = try #require(try config.connection("web1").route.problem)
        #expect(problem.code == .config)
        #expect(problem.message.hasPrefix("web1: jump host gw: \(path) line 3: Match exec \"test -f ~/.vpn-up\""))
        #expect(try config.connection("web2").route.isDirect)
    }

    @Test func twoRoutesAreTheSameOnlyWhenTheirJumpHostsOrCommandsAgree() throws {
        let config = try ConfigTest.config(
            """
            Host web1 web2
                ProxyJump gw
            Host web3
                ProxyJump admin@gw
            Host web4
                ProxyCommand nc %h %p
            Host gw
                HostName 192.0.2.7
            """)
        let web1 = try config.connection("web1").route
        #expect(web1.isSame(as: try config.connection("web1").route))
        #expect(web1.isSame(as: try config.connection("web2").route))
        #expect(!web1.isSame(as: try config.connection("web3").route))
        #expect(!web1.isSame(as: try config.connection("web4").route))
        #expect(!web1.isSame(as: try config.connection("web5").route))
        #expect(try config.connection("web4").route.isSame(as: try config.connection("web4").route))
        #expect(try config.connection("web5").route.isSame(as: .direct))
    }

    @Test func dashJWinsOverTheConfigsProxySettingsAndNoneLeavesItsProxyCommand() throws {
        let config = try ConfigTest.config(
            """
            Host web1
                ProxyJump from-config
            Host web2
                ProxyCommand ssh -W %h:%p gw
            """)
        var overrides = SSHConnectionOverrides()
        overrides.proxyJump = "cli-gw"
        #expect(try config.connection("web1", overrides: overrides).route.hop?.displayName == "cli-gw")
        #expect(try config.connection("web2", overrides: overrides).route.hop?.displayName == "cli-gw")
        overrides.proxyJump = "none"
        #expect(try config.connection("web1", overrides: overrides).route.isDirect)
        #expect(try config.connection("web2", overrides: overrides).route.command?.command == "ssh -W web2:22 gw")
    }

    @Test func theCommandLinesKeysAndKnownHostsApplyToEveryHopButItsUserAndPortDoNot() throws {
        let config = try ConfigTest.config("Host web1\n    ProxyJump gw\n")
        let overrides = SSHConnectionOverrides(
            user: "deploy", port: 2022, identityFiles: ["/keys/ops"], userKnownHostsFiles: ["/keys/known"],
            strictHostKeyChecking: .acceptNew, connectTimeout: .seconds(3))
        let web1 = try config.connection("web1", overrides: overrides)
        #expect(web1.user == "deploy" && web1.port == 2022)
        let gw = try #require(web1.route.hop)
        #expect(gw.user == "alice")
        #expect(gw.port == 22)
        #expect(gw.identityFiles.first == "/keys/ops")
        #expect(gw.knownHostsFiles.first == "/keys/known")
        #expect(gw.connectTimeout == .seconds(3))
    }

    @Test func proxyCommandTokensAreExpandedAsSSHExpandsThemAndQuotesReachTheShell() throws {
        let config = try ConfigTest.config(
            """
            Host web1
                HostName Web1.Example.NET
                User deploy
                Port 2200
                HostKeyAlias web1-key
                ProxyCommand sh -c "exec nc '%h' %p" # %r %n %k %%
            """)
        let command = try #require(try config.connection("web1").route.command)
        #expect(command.command == "sh -c \"exec nc 'web1.example.net' 2200\" # deploy web1 web1-key %")
        #expect(command.configured == "sh -c \"exec nc '%h' %p\" # %r %n %k %%")
        #expect(command.origin?.line == 6)
    }

    @Test func aProxyCommandWithAnUnknownTokenFailsThatHostAloneNamingTheLine() throws {
        let config = try ConfigTest.config("Host web1\n    ProxyCommand nc %h %p %j\n")
        let web1 = try config.connection("web1")
        let problem = try #require(web1.route.problem)
        #expect(problem.code == .config)
        #expect(
            problem.message
                == "web1: \(path) line 2: ProxyCommand \"nc %h %p %j\": %j is not a known token; write %% for a "
                + "percent sign")
        #expect(try config.connection("web2").route.isDirect)
    }

    @Test func jumpHostsThatLeadBackToEachOtherAreALoopNamingEveryStepAndItsLine() throws {
        let config = try ConfigTest.config(
            """
            Host a
                ProxyJump b
            Host b
                ProxyJump a
            """)
        let problem = try #require(try config.connection("a").route.problem)
        #expect(problem.code == .config)
        #expect(
            problem.message
                == "a: the jump hosts loop: a → b (ProxyJump b, \(path) line 2) → a (ProxyJump a, \(path) line 4), "
                + "so no connection can be made; give one of these hosts ProxyJump none in a block before the line "
                + "that sends it back, or remove the hop")
        // A host that merely goes through the loop fails the same way, naming itself.
        let c = try ConfigTest.config(
            "Host c\n    ProxyJump a\nHost a\n    ProxyJump b\nHost b\n    ProxyJump a\n"
        ).connection("c")
        #expect(c.route.problem?.message.hasPrefix("c: the jump hosts loop: a → b (ProxyJump b,") == true)
    }

    @Test func aWildcardThatSendsTheJumpHostThroughItselfIsALoop() throws {
        let config = try ConfigTest.config("Host *.internal\n    ProxyJump gw.internal\n")
        let problem = try #require(try config.connection("db.internal").route.problem)
        #expect(
            problem.message.hasPrefix(
                "db.internal: the jump hosts loop: gw.internal → gw.internal (ProxyJump gw.internal, \(path) line 2)"))
    }

    @Test func theSameJumpHostTwiceInAListIsNotALoopWhenItIsReachedDifferently() throws {
        // gw reached directly, then gw again reached through gw: odd, but finite, and ssh goes there too.
        let config = try ConfigTest.config("Host web1\n    ProxyJump gw,gw\n")
        let web1 = try config.connection("web1")
        #expect(web1.route.jumpHosts.map(\.displayName) == ["gw", "gw"])
    }

    @Test func anInvalidProxyJumpStopsTheConfigAsInSSHAndAnInvalidDashJStopsTheHost() throws {
        for value in ["a,,b", ",a", "a:99999", "a;b"] {
            let error = ConfigTest.error { _ = try ConfigTest.config("Host x\n    ProxyJump \(value)\n") }
            #expect(error?.code == .config, "\(value)")
            #expect(
                error?.message.hasPrefix("\(path) line 2: Invalid ProxyJump") == true,
                "\(value): \(error?.message ?? "")")
        }
        // `ssh` reads the first word only.
        #expect(try ConfigTest.resolve("x", in: "Host x\n    ProxyJump a b\n").proxy?.value == "a")
        var overrides = SSHConnectionOverrides()
        overrides.proxyJump = "gw,"
        let error = ConfigTest.error { _ = try ConfigTest.config("").connection("web1", overrides: overrides) }
        #expect(error?.message == "-J \"gw,\" is not valid: a hop is empty; separate hosts with single commas")
    }

    @Test func percentJIsTheLastJumpHostsName() throws {
        let text = "Host web1\n    ProxyJump ops@gw1:2200,gw2\n    IdentityFile ~/.ssh/via_%j\n"
        #expect(try ConfigTest.resolve("web1", in: text).identityFiles.first?.path == ConfigTest.home + "/.ssh/via_gw2")
        #expect(
            try ConfigTest.resolve("other", in: "IdentityFile ~/.ssh/via_%j\n").identityFiles.first?.path
                == ConfigTest.home + "/.ssh/via_")
    }
}
