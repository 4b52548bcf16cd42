import Foundation
import SSHTransport
import Testing

@Suite struct SSHConfigFileSystemTests {
    private let files = InMemorySSHConfigFileSystem([
        "/etc/ssh/ssh_config.d/10-a.conf": "a",
        "/etc/ssh/ssh_config.d/20-b.conf": "b",
        "/etc/ssh/ssh_config.d/.hidden.conf": "h",
        "/etc/ssh/ssh_config.d/sub/30-c.conf": "c",
        "/etc/ssh/ssh_config.d/x.txt": "x",
        "/etc/ssh/other/[literal].conf": "l",
    ])

    @Test(arguments: [
        ("/etc/ssh/ssh_config.d/*.conf", ["/etc/ssh/ssh_config.d/10-a.conf", "/etc/ssh/ssh_config.d/20-b.conf"]),
        ("/etc/ssh/ssh_config.d/?0-*", ["/etc/ssh/ssh_config.d/10-a.conf", "/etc/ssh/ssh_config.d/20-b.conf"]),
        ("/etc/ssh/ssh_config.d/[!1]*.conf", ["/etc/ssh/ssh_config.d/20-b.conf"]),
        ("/etc/ssh/ssh_config.d/[a-z]*", ["/etc/ssh/ssh_config.d/sub", "/etc/ssh/ssh_config.d/x.txt"]),
        ("/etc/ssh/ssh_config.d/.*.conf", ["/etc/ssh/ssh_config.d/.hidden.conf"]),
        ("/etc/ssh/*/*-c.conf", []),
        ("/etc/ssh/*/sub/*", ["/etc/ssh/ssh_config.d/sub/30-c.conf"]),
        ("/etc/ssh/ssh_config.d/x.txt", ["/etc/ssh/ssh_config.d/x.txt"]),
        ("/etc/ssh/ssh_config.d/missing", []),
        ("/etc/ssh/other/\\[literal].conf", ["/etc/ssh/other/[literal].conf"]),
        ("/nowhere/*", []),
    ])
    func globsMatchAsGlob3Does(pattern: String, expected: [String]) {
        #expect(files.paths(matchingGlob: pattern) == expected)
    }

    @Test func inMemoryDirectoriesExistWhereFilesLieUnderThem() throws {
        #expect(try files.readFile(atPath: "/etc/ssh/ssh_config.d/10-a.conf") == "a")
        #expect(try files.readFile(atPath: "/etc/ssh/ssh_config.d") == "")
        #expect(try files.readFile(atPath: "/etc/ssh/none") == nil)
        #expect(files.directoryEntries(atPath: "/etc/ssh") == ["other", "ssh_config.d"])
    }

    @Test func theLocalFileSystemReadsFilesAndDirectoriesAndGlobsThem() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("globs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "Host b\n".write(to: directory.appendingPathComponent("b.conf"), atomically: true, encoding: .utf8)
        try Data([0x48, 0x6F, 0x73, 0x74, 0x20, 0xFF, 0x0A]).write(to: directory.appendingPathComponent("a.conf"))
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("d.conf"), withIntermediateDirectories: true)

        let local = LocalSSHConfigFileSystem()
        #expect(
            local.paths(matchingGlob: directory.path + "/*.conf")
                == ["a.conf", "b.conf", "d.conf"].map { directory.path + "/" + $0 })
        #expect(try local.readFile(atPath: directory.path + "/b.conf") == "Host b\n")
        #expect(try local.readFile(atPath: directory.path + "/a.conf") == "Host \u{FFFD}\n")
        #expect(try local.readFile(atPath: directory.path + "/d.conf") == "")
        #expect(try local.readFile(atPath: directory.path + "/missing") == nil)
    }
}
