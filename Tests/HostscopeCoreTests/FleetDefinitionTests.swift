import Foundation
import HostscopeCore
import SSHTransport
import Testing

@Suite struct FleetDefinitionTests {
    let directory: String

    init() throws {
        directory = NSTemporaryDirectory() + "hostscope-fleet-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try """
        Host web-1 web-2
            User deploy
        Host db-1
            Port 2222

        """.write(toFile: directory + "/ssh_config", atomically: true, encoding: .utf8)
    }

    func definition(_ arguments: [String], hostsFile: String? = nil) -> FleetDefinition {
        var settings = ConnectionSettings()
        settings.configFile = directory + "/ssh_config"
        return FleetDefinition(arguments: arguments, hostsFile: hostsFile, settings: settings)
    }

    @Test func patternsAdmitBareNamesOnlyAndNothingOutsideTheFleet() throws {
        let fleet = try definition(["web-*", "local"]).resolve()
        #expect(fleet.hosts.map(\.displayName) == ["web-1", "web-2", "local"])
        #expect(fleet.patterns == ["web-*"])
        #expect(fleet.host(named: "web-1")?.displayName == "web-1")
        // A name the pattern matches, resolved through ssh_config like any host.
        guard case .ssh(let options)? = fleet.host(named: "web-9") else {
            Issue.record("web-9 is admitted by web-*")
            return
        }
        #expect(options.displayName == "web-9")
        #expect(options.hostName == "web-9")
        // Nothing that would change where or as whom hostscope connects, nor a name no pattern matches.
        for name in ["root@web-9", "web-9:22", "[web-9]", "web-9/x", "db-1", "evil.example", "", "web-9 x"] {
            #expect(fleet.host(named: name) == nil, "\(name)")
        }
        // `local` only when named outright: here it is.
        #expect(fleet.host(named: "local") != nil)
        #expect(try definition(["web-*"]).resolve().host(named: "local") == nil)
    }

    @Test func aHostsFileIsReadAgainOnEachResolveAndAMissingOneSaysWhatToDo() throws {
        let hostsFile = directory + "/hosts"
        try "# the fleet\ndb-1\n".write(toFile: hostsFile, atomically: true, encoding: .utf8)
        let fleet = definition([], hostsFile: hostsFile)
        #expect(try fleet.resolve().hosts.map(\.displayName) == ["db-1"])
        try "db-1\nweb-*\n".write(toFile: hostsFile, atomically: true, encoding: .utf8)
        let reloaded = try fleet.resolve()
        #expect(reloaded.hosts.map(\.displayName) == ["db-1", "web-1", "web-2"])
        #expect(reloaded.host(named: "web-3") != nil)

        try FileManager.default.removeItem(atPath: hostsFile)
        #expect(throws: CoreError(.invalidRequest, "cannot read the hosts file \(hostsFile); check the path")) {
            try fleet.resolve()
        }
        #expect(throws: CoreError.self) { try definition([]).resolve() }
    }
}
