import ServeAPI
import Testing

@Suite struct HostHeaderPolicyTests {
    /// A loopback listener on 9464: no own names beyond loopback ones.
    let loopback = HostHeaderPolicy(port: 9464, secure: false, ownNames: [], allowed: [])

    @Test(arguments: [
        "localhost:9464", "LocalHost:9464", "localhost.:9464", "127.0.0.1:9464", "127.8.9.10:9464", "[::1]:9464",
        "[0:0:0:0:0:0:0:1]:9464",
    ])
    func loopbackNamesWithTheListenPortAreAnswered(host: String) {
        #expect(loopback.admits(host))
    }

    @Test(arguments: [
        "evil.example:9464", "evil.example", "localhost", "localhost:80", "127.0.0.1:9465", "127.lan.example:9464",
        "localhost.evil.example:9464", "[::2]:9464", "10.0.0.5:9464", "", "localhost:9464 ", "a b:9464",
        "localhost:99999", "[::1", "localhost@evil:9464",
    ])
    func otherNamesPortsAndMalformedValuesAreMisdirected(host: String) {
        #expect(!loopback.admits(host))
    }

    @Test func aHostWithoutPortStandsForTheSchemesDefaultPort() {
        let http = HostHeaderPolicy(port: 80, secure: false, ownNames: [], allowed: [])
        #expect(http.admits("localhost"))
        #expect(!http.admits("localhost:443"))
        let https = HostHeaderPolicy(port: 443, secure: true, ownNames: [], allowed: [])
        #expect(https.admits("127.0.0.1"))
        #expect(!https.admits("127.0.0.1:80"))
    }

    @Test func beyondLoopbackTheMachinesOwnNamesAndAddressesAreAnsweredWithTheListenPort() {
        let policy = HostHeaderPolicy(
            port: 9464, secure: false, ownNames: ["10.0.0.5", "Monitor1", "monitor1.corp.example.", "fe80::1"],
            allowed: [])
        #expect(policy.admits("monitor1:9464"))
        #expect(policy.admits("MONITOR1.corp.example:9464"))
        #expect(policy.admits("10.0.0.5:9464"))
        #expect(policy.admits("[fe80::1]:9464"))
        #expect(policy.admits("localhost:9464"))
        #expect(!policy.admits("monitor1:9100"))
        #expect(!policy.admits("evil.example:9464"))
        #expect(!policy.admits("monitor1.evil.example:9464"))
    }

    @Test func allowedHostsAreAnsweredOnAnyPortUnlessTheyNameOneAndStarTurnsTheCheckOff() throws {
        let values = ["grafana.example", "proxy.example:8443"].map { HostHeaderPolicy.Allowed($0) }
        let policy = HostHeaderPolicy(port: 9464, secure: false, ownNames: [], allowed: values.compactMap { $0 })
        #expect(policy.admits("grafana.example"))
        #expect(policy.admits("grafana.example:443"))
        #expect(policy.admits("proxy.example:8443"))
        #expect(!policy.admits("proxy.example:9464"))
        #expect(!policy.admits("evil.example:9464"))
        #expect(!policy.admitsAny)
        let any = HostHeaderPolicy(port: 9464, secure: false, ownNames: [], allowed: [try #require(.init("*"))])
        #expect(any.admitsAny)
        #expect(any.admits("evil.example:1"))
        #expect(HostHeaderPolicy.Allowed("*.example") == nil)
        #expect(HostHeaderPolicy.Allowed("a b") == nil)
        #expect(HostHeaderPolicy.Allowed("host:x") == nil)
    }

    @Test func aRequestWithoutHostIsAnsweredSinceBrowsersAlwaysSendOne() {
        #expect(loopback.admits(nil))
    }
}
