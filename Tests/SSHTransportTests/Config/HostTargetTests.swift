import SSHTransport
import Testing

@Suite struct HostTargetTests {
    @Test func localIsTheMachineItself() throws {
        #expect(try HostTarget(parsing: "local") == .local)
        #expect(HostTarget.local.description == "local")
    }

    @Test func anythingElseIsARemoteDestination() throws {
        let target = try HostTarget(parsing: "me@localhost:2222")
        #expect(target == .remote(SSHDestination(host: "localhost", user: "me", port: 2222)))
        #expect(target.description == "me@localhost:2222")
        #expect(try HostTarget(parsing: "Local") == .remote(SSHDestination(host: "Local")))
    }
}
