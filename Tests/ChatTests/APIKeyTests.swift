import Chat
import Foundation
import Testing

@Suite("APIKeyResolver")
struct APIKeyResolverTests {
    private func temporaryFile(_ text: String, mode: Int) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hostscope-key-\(UUID().uuidString)")
            .path
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        return path
    }

    @Test("Each provider's own variable is used, and none means no key")
    func providerVariables() throws {
        let resolver = APIKeyResolver(environment: [
            "OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": "sk-a", "OPENROUTER_API_KEY": " sk-r\n",
        ])
        #expect(try resolver.resolve(for: .openAI)?.origin == "OPENAI_API_KEY")
        #expect(try resolver.resolve(for: .anthropic)?.origin == "ANTHROPIC_API_KEY")
        #expect(try resolver.resolve(for: .openRouter) == APIKey("sk-r", origin: "OPENROUTER_API_KEY"))
        #expect(try APIKeyResolver(environment: [:]).resolve(for: .openAI) == nil)
        #expect(try resolver.resolve(for: .gateway) == nil)
    }

    @Test("A named variable wins, and an unset named variable is an error")
    func namedVariable() throws {
        let resolver = APIKeyResolver(environment: ["OPENAI_API_KEY": "sk-o", "MY_KEY": "sk-mine"])
        #expect(try resolver.resolve(for: .openAI, variable: "MY_KEY") == APIKey("sk-mine", origin: "MY_KEY"))
        #expect(throws: ChatError.self) { try resolver.resolve(for: .openAI, variable: "UNSET_KEY") }
    }

    @Test("A credentials file must be private to its owner; otherwise it is refused with the chmod to run")
    func credentialsFileMode() throws {
        let open = try temporaryFile("sk-file\n", mode: 0o644)
        defer { try? FileManager.default.removeItem(atPath: open) }
        do {
            _ = try APIKeyResolver(environment: [:]).resolve(for: .openAI, credentialsFile: open)
            Issue.record("a world-readable credentials file was accepted")
        } catch {
            #expect(error.kind == .configuration)
            #expect(error.message.contains("chmod 600 \(open)"))
            #expect(error.message.contains("0644"))
            #expect(!error.message.contains("sk-file"))
        }
        let closed = try temporaryFile("sk-file\n", mode: 0o600)
        defer { try? FileManager.default.removeItem(atPath: closed) }
        let key = try APIKeyResolver(environment: [:]).resolve(for: .openAI, credentialsFile: closed)
        #expect(key == APIKey("sk-file", origin: "the credentials file \(closed)"))
    }

    @Test("A credentials file of NAME=value lines gives each provider its own key")
    func credentialsFileAssignments() throws {
        let path = try temporaryFile(
            "# keys\nOPENAI_API_KEY=sk-o\nexport_not=1\nANTHROPIC_API_KEY=\"sk-a=\"\n", mode: 0o600)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let resolver = APIKeyResolver(environment: [:])
        #expect(
            try resolver.resolve(for: .openAI, credentialsFile: path)
                == APIKey("sk-o", origin: "the credentials file \(path)"))
        #expect(
            try resolver.resolve(for: .anthropic, credentialsFile: path)
                == APIKey("sk-a=", origin: "the credentials file \(path)"))
        #expect(throws: ChatError.self) { try resolver.resolve(for: .openRouter, credentialsFile: path) }
    }

    @Test("Printing, dumping or interpolating a key shows only where it came from")
    func neverPrinted() {
        let key = APIKey("sk-secret-123456", origin: "OPENAI_API_KEY")
        var dumped = ""
        dump(key, to: &dumped)
        for text in ["\(key)", String(describing: key), String(reflecting: key), dumped] {
            #expect(!text.contains("sk-secret"))
            #expect(text.contains("OPENAI_API_KEY"))
        }
        #expect(key.scrub("bad key sk-secret-123456 given") == "bad key REDACTED given")
    }

    @Test("A real key is registered for redaction; a local server's one-letter placeholder is not")
    func placeholdersAreNotRedacted() {
        var registered: [String] = []
        APIKey("sk-secret-123456", origin: "OPENAI_API_KEY").registerForRedaction { registered.append($0) }
        APIKey("x", origin: "OPENAI_API_KEY").registerForRedaction { registered.append($0) }
        #expect(registered == ["sk-secret-123456"])
        #expect(APIKey("x", origin: "OPENAI_API_KEY").scrub("x86_64 box") == "x86_64 box")
    }
}
