import Foundation
import SSHTransport
import Testing

@Suite struct SSHConfigEnvironmentTests {
    @Test func theProcessEnvironmentFillsEveryInput() {
        let environment = SSHConfigEnvironment.current()
        let home = ProcessInfo.processInfo.environment["HOME"] ?? ""
        if !home.isEmpty {
            #expect(environment.homeDirectory == home)
        }
        #expect(environment.homeDirectory.hasPrefix("/"))
        #expect(!environment.localUser.isEmpty)
        #expect(environment.localHostName?.isEmpty == false)
        #expect(environment.userID != nil)
        #expect(environment.variables["PATH"] == ProcessInfo.processInfo.environment["PATH"])
        #expect(environment.homeDirectoryOfUser(environment.localUser)?.hasPrefix("/") == true)
    }

    @Test func tokensThatNeedUnknownInputsSaySo() throws {
        var environment = ConfigTest.environment()
        environment.localHostName = nil
        environment.userID = nil
        let config = try SSHConfig(
            parsing: "IdentityFile ~/%l\nIdentityAgent /run/%i\n", path: "c", environment: environment)
        let error = ConfigTest.error { _ = try config.resolve(host: "web1") }
        #expect(error?.message == "c line 1: IdentityFile \"~/%l\": %l (the local host name) is not known here")
    }
}
