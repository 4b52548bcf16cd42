import Digests
import Foundation
import RemoteFiles
import SSHTransport
import TestSupport
import Testing
import ValueFormats

/// Options for the harness server with its key and known_hosts.
func filesHarnessOptions(_ server: SSHTestServer) -> SSHConnectionOptions {
    SSHConnectionOptions(
        displayName: "harness", hostName: server.host, port: server.port, user: server.user,
        identityFiles: [server.keyPath], identitiesOnly: true, agentSocket: nil,
        knownHostsFiles: [server.knownHostsPath], hostKeyPolicy: .strict, connectTimeout: .seconds(10),
        allowPassword: false, secrets: nil)
}

/// Runs `body` with a browser on a fresh harness session, optionally confined to `root`.
func withBrowser<T: Sendable>(
    root: String? = nil, _ body: (RemoteFileBrowser, SSHSession) async throws -> T
) async throws -> T {
    let server = try SSHTestServer.shared()
    return try await withSSHSession(filesHarnessOptions(server)) { session in
        let browser = try await RemoteFileBrowser.open(
            session: session, host: "harness", root: root.map { RemotePath($0) })
        return try await body(browser, session)
    }
}

/// The error `body` throws, as a ``RemoteFilesError``; records an issue when it does not throw one.
func remoteFilesError(
    _ body: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation
) async -> RemoteFilesError? {
    do {
        try await body()
        Issue.record("expected a RemoteFilesError, got success", sourceLocation: sourceLocation)
    } catch let error as RemoteFilesError {
        return error
    } catch {
        Issue.record("expected a RemoteFilesError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

/// The shared read-mostly tree (built once: Swift Testing makes a suite instance per test).
enum SharedTree {
    static let tree = Result { try FilesTestTree().removeAtExit() }
    static let hugeDirectory = Result { () throws -> String in
        try FilesTestTree(prefix: "hostscope-huge").removeAtExit().makeHugeDirectory("huge", count: 10_000)
    }
}

/// Lowercase hex of a digest.
func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

/// SHA-256 of a local file.
func sha256(ofFile path: String) throws -> String {
    hex(SHA256.hash(try Data(contentsOf: URL(fileURLWithPath: path))))
}
