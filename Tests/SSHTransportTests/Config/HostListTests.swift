import SSHTransport
import Testing

@Suite struct HostListTests {
    private let fleet = """
        Host web1 web2
          User deploy
        Host db-1 db-2 db-old
        Host db-* *.internal
          Port 2200
        Host *
        """

    @Test func hostsFilesHoldOneHostPerLineWithCommentsAndBlanks() throws {
        let text = "# fleet\n\n  web1  \ndeploy@web2:2222 # the new one\n\tdb-*\r\n#web3\n"
        let entries = try HostList.parseHostsFile(text, path: "hosts.txt")
        #expect(entries.map(\.text) == ["web1", "deploy@web2:2222", "db-*"])
        #expect(entries.map { $0.location?.line } == [3, 4, 5])
    }

    @Test func hostsFilesAreReadThroughTheFileSystemAndMustExist() throws {
        let files = InMemorySSHConfigFileSystem(["/srv/fleet.txt": "web1\nweb2\n"])
        let entries = try HostList.readHostsFile(atPath: "/srv/fleet.txt", fileSystem: files)
        #expect(entries.map(\.text) == ["web1", "web2"])
        #expect(entries.first?.location == SSHConfigLocation(file: "/srv/fleet.txt", line: 1))
        let error = ConfigTest.error { _ = try HostList.readHostsFile(atPath: "/srv/none.txt", fileSystem: files) }
        #expect(error?.message == "the hosts file /srv/none.txt does not exist; check the path")
    }

    @Test func twoHostsOnALineAreAnError() {
        let error = ConfigTest.error { _ = try HostList.parseHostsFile("web1\nweb2 web3\n", path: "hosts.txt") }
        #expect(error?.code == .config)
        #expect(error?.message == "hosts.txt line 2: \"web2 web3\" is more than one host; write one per line")
    }

    @Test func patternsExpandToConcreteHostNamesAndHostsPassThrough() throws {
        let config = try ConfigTest.config(fleet)
        let targets = try HostList.targets(forArguments: ["web1", "db-*", "local", "me@other:2222"], config: config)
        #expect(
            targets.map(\.description) == ["web1", "db-1", "db-2", "db-old", "local", "me@other:2222"])
    }

    @Test func patternListsNegateAndUserAndPortCarryOverToEveryHost() throws {
        let config = try ConfigTest.config(fleet)
        let targets = try HostList.targets(forArguments: ["root@db-*,!db-old:2201"], config: config)
        #expect(targets.map(\.description) == ["root@db-1:2201", "root@db-2:2201"])
    }

    @Test func eachHostComesOnceInFirstSeenOrder() throws {
        let config = try ConfigTest.config(fleet)
        let targets = try HostList.targets(forArguments: ["db-2", "db-*", "web?", "web1"], config: config)
        #expect(targets.map(\.description) == ["db-2", "db-1", "db-old", "web1", "web2"])
    }

    @Test func aPatternThatSelectsNothingIsAnErrorNamingTheFilesSearched() throws {
        let config = try ConfigTest.config(fleet)
        let error = ConfigTest.error { _ = try HostList.targets(forArguments: ["cache-*"], config: config) }
        #expect(error?.code == .config)
        #expect(
            error?.message
                == "the pattern \"cache-*\" selects no host: no Host name in \(ConfigTest.home)/.ssh/config matches it")
    }

    @Test func hostsFileErrorsNameTheirLine() throws {
        let config = try ConfigTest.config(fleet)
        let entries = try HostList.parseHostsFile("web1\nweb1:99999\n", path: "hosts.txt")
        let error = ConfigTest.error { _ = try HostList.targets(for: entries, config: config) }
        let reason = "the port \"99999\" is not a number from 1 to 65535"
        #expect(error?.message == "hosts.txt line 2: \"web1:99999\" is not a valid host: \(reason)")
    }

    @Test func patternsFromAHostsFileExpandToo() throws {
        let config = try ConfigTest.config(fleet)
        let entries = try HostList.parseHostsFile("db-?\n", path: "hosts.txt")
        #expect(try HostList.targets(for: entries, config: config).map(\.description) == ["db-1", "db-2"])
    }

    @Test(arguments: [("db-*", true), ("db?", true), ("a,b", true), ("!a", true), ("web1", false), ("[::1]:22", false)])
    func patternsAreRecognisedByTheirWildcardsCommasAndNegation(text: String, isPattern: Bool) {
        #expect(HostList.isPattern(text) == isPattern)
    }
}
