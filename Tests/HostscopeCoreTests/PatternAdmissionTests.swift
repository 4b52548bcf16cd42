import Foundation
import HostscopeCore
import SSHTransport
import Testing

/// The rule by which a fleet's patterns admit names a request gives (`serve`'s `/probe`).
@Suite struct PatternAdmissionTests {
    let directory: String

    init() throws {
        directory = NSTemporaryDirectory() + "hostscope-admission-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try """
        Host corp-0 corp-*
            HostName %h.corp.example
        Host fixed-0 fixed-*
            HostName 192.0.2.10
        Host same-0 same-*
            HostName %h
        Host web-0 web-* db-1 db-* printer.lan *.lan
            User deploy

        """.write(toFile: directory + "/ssh_config", atomically: true, encoding: .utf8)
    }

    func fleet(_ patterns: [String], settings: (inout ConnectionSettings) -> Void = { _ in }) throws -> ResolvedFleet {
        var connection = ConnectionSettings()
        connection.configFile = directory + "/ssh_config"
        settings(&connection)
        return try FleetDefinition(arguments: patterns, hostsFile: nil, settings: connection).resolve()
    }

    @Test(arguments: [
        "web-x.evil.example", "web-", "web-..", "web-127.0.0.1", "web-evil.", "WEB-EVIL", "web-.", "web-a..b",
        "web--", "web-x.", "web-1/x", "web-é", ".web-1", "web-1..", "local",
    ])
    func namesThatWouldChooseTheAddressOrThatAnExclusionCoversAreRefused(name: String) throws {
        let fleet = try fleet(["web-*,!web-evil,!web-x"])
        #expect(fleet.host(named: name) == nil, "\(name)")
    }

    @Test func plainNamesAreAdmittedLowerCasedAndWithoutTheirTrailingDot() throws {
        let fleet = try fleet(["web-*,!web-evil"])
        #expect(fleet.host(named: "web-7")?.displayName == "web-7")
        #expect(fleet.host(named: "WEB-7.")?.displayName == "web-7")
        #expect(fleet.host(named: "web-a_b")?.displayName == "web-a_b")
    }

    @Test func aFixedHostNameOrOneUnderAFixedDomainAdmitsNamesWithDots() throws {
        let fleet = try fleet(["corp-*", "fixed-*", "same-*"])
        guard case .ssh(let corp)? = fleet.host(named: "corp-x.evil.example") else {
            Issue.record("corp-x.evil.example is admitted under corp.example")
            return
        }
        #expect(corp.hostName == "corp-x.evil.example.corp.example")
        guard case .ssh(let fixed)? = fleet.host(named: "fixed-a.b.c") else {
            Issue.record("fixed-a.b.c is admitted: its address is fixed")
            return
        }
        #expect(fixed.hostName == "192.0.2.10")
        // `HostName %h` leaves the address to the name: the dots rule holds.
        #expect(fleet.host(named: "same-1") != nil)
        #expect(fleet.host(named: "same-1.evil.example") == nil)
    }

    @Test func aPatternWithDotsAdmitsAsManyAndNumericAddressesNever() throws {
        let fleet = try fleet(["*.lan", "*"])
        #expect(fleet.host(named: "printer.lan") != nil)
        #expect(fleet.host(named: "printer.evil.lan") == nil)
        // `*` admits one label, but never one the resolver reads as an IPv4 address.
        #expect(fleet.host(named: "gateway") != nil)
        for name in ["2130706433", "0x7f000001", "127.1", "0177.1"] {
            #expect(fleet.host(named: name) == nil, "\(name)")
        }
    }

    @Test func aHostAdmittedByAPatternNeverRecordsAKeyNorSendsAPassword() throws {
        let fleet = try fleet(["web-*", "db-1"]) { settings in
            settings.acceptNewHostKey = true
            settings.passwordEnvironmentVariable = "HOSTSCOPE_TEST_PASSWORD"
        }
        guard case .pattern(.ssh(let admitted))? = fleet.admission(of: "web-9") else {
            Issue.record("web-9 is admitted by web-*")
            return
        }
        #expect(admitted.hostKeyPolicy == .strict)
        #expect(!admitted.allowPassword)
        #expect(admitted.hostKeyRecorded == nil)
        // A host the operator named keeps the options given.
        guard case .named(.ssh(let named))? = fleet.admission(of: "db-1") else {
            Issue.record("db-1 is named")
            return
        }
        #expect(named.hostKeyPolicy == .acceptNew)
    }

    @Test func normalizationIsAsOpenSSHCompares() {
        #expect(PatternAdmission.normalized("Web-1.") == "web-1")
        #expect(PatternAdmission.normalized("web-1..") == nil)
        #expect(PatternAdmission.normalized(".") == nil)
        #expect(PatternAdmission.normalized("") == nil)
        #expect(PatternAdmission.normalized(String(repeating: "a", count: 64)) == nil)
        #expect(PatternAdmission.patternDots(selecting: "web-1", patternList: "WEB-*,!web-2") == 0)
        #expect(PatternAdmission.patternDots(selecting: "web-2", patternList: "web-*,!web-2") == nil)
    }
}
