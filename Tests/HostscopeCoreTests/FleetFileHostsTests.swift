import Foundation
import HostStats
import HostscopeCore
import Testing

@Suite struct FleetFileHostsTests {
    let directory: String

    init() throws {
        directory = NSTemporaryDirectory() + "hostscope-fleetfile-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try """
        Host web-1 web-2 web-3
            User deploy
        Host db-1 db-2
            Port 2222

        """.write(toFile: directory + "/ssh_config", atomically: true, encoding: .utf8)
    }

    func write(_ text: String) throws -> String {
        let path = directory + "/fleet.yaml"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func definition(_ arguments: [String] = [], fleetFile: String) -> FleetDefinition {
        var settings = ConnectionSettings()
        settings.configFile = directory + "/ssh_config"
        return FleetDefinition(arguments: arguments, hostsFile: nil, fleetFile: fleetFile, settings: settings)
    }

    static let fleet = """
        defaults: {interval: 20s, labels: {dc: fra1}}
        groups:
          web:
            hosts: ['web-*', {host: web-3, labels: {rack: r7}}]
            labels: {env: prod, role: web}
            top: 5
          db:
            hosts: [db-1]
            labels: {env: prod, role: db}
            interval: 1m
            collector: proc
        """

    @Test func patternsAndHostsGetTheirGroupsLabelsAndSettings() throws {
        let fleet = try definition(fleetFile: write(Self.fleet)).resolve()
        #expect(fleet.hosts.map(\.displayName) == ["web-1", "web-2", "web-3", "db-1"])
        #expect(fleet.profile(of: "web-1").labels == ["dc": "fra1", "env": "prod", "role": "web"])
        // web-3 is named outright too: that entry's labels win over the pattern's.
        #expect(fleet.profile(of: "web-3").labels == ["dc": "fra1", "env": "prod", "role": "web", "rack": "r7"])
        #expect(
            fleet.profile(of: "db-1")
                == HostProfile(
                    labels: ["dc": "fra1", "env": "prod", "role": "db"], interval: .seconds(60), collector: .proc))
        #expect(fleet.profile(of: "web-2").interval == .seconds(20))
        #expect(fleet.profile(of: "web-2").top == 5)
        // A name the group's pattern admits on request gets the group's profile; others none.
        #expect(fleet.profile(of: "web-9").labels["role"] == "web")
        #expect(fleet.profile(of: "mail-1") == HostProfile())
    }

    @Test func aHostTwoPatternsLabelDifferentlyIsRefusedNamingBothLines() throws {
        let path = try write(
            """
            groups:
              web:
                hosts: ['web-*']
                labels: {env: prod}
              canary:
                hosts: ['web-1,web-2', db-1]
                labels: {env: canary}
            """)
        #expect(
            throws: CoreError(
                .invalidRequest,
                "the fleet file \(path), line 6: web-1 (from web-1,web-2) is also selected by web-* (line 3) with "
                    + "env=prod there and env=canary here; give it the same in both groups, or select it once")
        ) { try definition(fleetFile: path).resolve() }
        // A host named outright in one group and selected by another's pattern takes the named entry's.
        let named = try write(
            """
            groups:
              web: {hosts: ['web-*'], labels: {env: prod}}
              canary: {hosts: [web-2], labels: {env: canary}}
            """)
        #expect(try definition(fleetFile: named).resolve().profile(of: "web-2").labels == ["env": "canary"])
    }

    @Test func flagsAndHostArgumentsWinOverTheFile() throws {
        var definition = definition(["db-2", "web-1"], fleetFile: try write(Self.fleet))
        definition.flags = FleetFlags(interval: true, collector: true)
        let fleet = try definition.resolve()
        // The arguments are the fleet; the file still labels the hosts it names.
        #expect(fleet.hosts.map(\.displayName) == ["db-2", "web-1"])
        #expect(fleet.profile(of: "db-2") == HostProfile())
        #expect(fleet.profile(of: "web-1").labels["role"] == "web")
        #expect(fleet.profile(of: "web-1").interval == nil)
        #expect(fleet.profile(of: "web-1").top == 5)
        let (interval, options) = definition.flags.applying(
            FleetCollectionDefaults(fleet.file), interval: .seconds(3), collector: CollectorOptions(topProcesses: 7))
        #expect(interval == .seconds(3))
        #expect(options.topProcesses == 7)
        let (fileInterval, _) = FleetFlags().applying(
            FleetCollectionDefaults(fleet.file), interval: .seconds(3), collector: CollectorOptions())
        #expect(fileInterval == .seconds(20))
    }

    @Test func aLabelFilterKeepsMatchingHostsAndSaysWhichLabelsExist() throws {
        var definition = definition(fleetFile: try write(Self.fleet))
        definition.labels = try LabelSelector(arguments: ["role=db"])
        #expect(try definition.resolve().hosts.map(\.displayName) == ["db-1"])
        definition.labels = try LabelSelector(arguments: ["env=staging"])
        #expect(throws: CoreError.self) { try definition.resolve() }
        do {
            _ = try definition.resolve()
        } catch {
            #expect(error.message.hasPrefix("no host of the fleet has the labels env=staging; the labels its hosts "))
            #expect(error.message.contains("role=db"))
        }
        #expect(throws: CoreError.self) { try LabelSelector(arguments: ["env"]) }
    }

    @Test func aBrokenFleetFileNamesItsLineAndAMissingOneItsPath() throws {
        let path = try write("groups:\n  web:\n    hosts: [web-1]\n    every: 5s\n")
        #expect(throws: CoreError.self) { try definition(fleetFile: path).resolve() }
        do {
            _ = try definition(fleetFile: path).resolve()
        } catch {
            #expect(error.message.hasPrefix("the fleet file \(path), line 4: \"every\" is not a key of the group web"))
        }
        // A pattern that selects nothing is said at its line, as the file's other problems are.
        let empty = try write("groups:\n  mail:\n    hosts: ['mail-*']\n")
        #expect(
            throws: CoreError(
                .invalidRequest,
                "the fleet file \(empty), line 3: the pattern \"mail-*\" selects no host: no Host name in "
                    + "\(directory)/ssh_config matches it")
        ) { try definition(fleetFile: empty).resolve() }
        try FileManager.default.removeItem(atPath: path)
        #expect(throws: CoreError(.invalidRequest, "cannot read the fleet file \(path); check the path")) {
            try definition(fleetFile: path).resolve()
        }
    }
}
