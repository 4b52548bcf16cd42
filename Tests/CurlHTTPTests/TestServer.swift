import CurlHTTP
import Foundation
import TestSupport

/// Runs `body` against a fresh `Scripts/http_test_server.py` and a fresh client, both stopped afterwards.
func withTestServer(
    arguments: [String] = [], configuration: HTTPClient.Configuration = HTTPClient.Configuration(),
    _ body: (PythonServer, HTTPClient) async throws -> Void
) async throws {
    try await withPythonServer("http_test_server.py", arguments: arguments) { server in
        try await withHTTPClient(configuration: configuration) { client in
            try await body(server, client)
        }
    }
}

/// Decodes a JSON object body, failing the test with the body's text when it is not one.
func jsonObject(_ bytes: [UInt8]) throws -> [String: Any] {
    guard let object = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
        throw DecodingFailure(text: String(decoding: bytes, as: UTF8.self))
    }
    return object
}

struct DecodingFailure: Error, CustomStringConvertible {
    let text: String
    var description: String { "not a JSON object: \(text)" }
}

/// Measures how long `body` takes on the continuous clock.
func elapsed(_ body: () async throws -> Void) async rethrows -> Duration {
    let start = ContinuousClock.now
    try await body()
    return ContinuousClock.now - start
}
