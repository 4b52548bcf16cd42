import ArgumentParser
import Chat
import Foundation
import HostscopeCore
import TerminalUI

/// `serve`'s chat over HTTP (`/api/v1/chat/…`, the dashboard's Chat screen): the provider, model and base URL
/// as `chat` takes them, and where the key is read on the server (its environment or a credentials file). The
/// browser names only the host and the message; no key is ever sent to it.
struct ServeChatOptions: ParsableArguments {
    @Option(
        name: .customLong("chat-provider"),
        help: ArgumentHelp("Answer chat over HTTP with this provider (default: no chat).", valueName: "provider"))
    var provider: ProviderKind?

    @Option(
        name: .customLong("chat-model"),
        help: ArgumentHelp("The chat's model (default: the provider's, as for `chat`).", valueName: "name"))
    var model: String?

    @Option(
        name: .customLong("chat-base-url"),
        help: ArgumentHelp("The chat provider's base URL, as `chat --base-url` takes it (@FILE too).", valueName: "url")
    )
    var baseURL: String?

    @Option(
        name: .customLong("chat-api-key-env"),
        help: ArgumentHelp("The variable of serve's environment holding the chat's API key.", valueName: "var"))
    var apiKeyEnv: String?

    @Option(
        name: .customLong("chat-credentials"),
        help: ArgumentHelp("A credentials file (mode 0600) holding the chat's API key.", valueName: "file"))
    var credentials: String?

    @Option(
        name: .customLong("chat-max-turns"),
        help: ArgumentHelp("Chat turns running at once, over every conversation.", valueName: "n"))
    var maxTurns: Int = 4

    @Option(
        name: .customLong("chat-turn-timeout"),
        help: ArgumentHelp("How long one chat turn may run before it is stopped (default: 5m).", valueName: "duration"))
    var turnTimeout: DurationArgument?

    func validate() throws {
        let given = model != nil || baseURL != nil || apiKeyEnv != nil || credentials != nil
        if provider == nil, given {
            throw ValidationError(
                "--chat-model, --chat-base-url, --chat-api-key-env and --chat-credentials need --chat-provider.")
        }
        guard (1...64).contains(maxTurns) else { throw ValidationError("--chat-max-turns must be from 1 to 64.") }
        if let turnTimeout, turnTimeout.duration < .seconds(1) || turnTimeout.duration > .seconds(3600) {
            throw ValidationError("--chat-turn-timeout must be from 1s to 1h.")
        }
    }

    /// The chat turns of serve, `nil` without `--chat-provider`; the provider's key is looked up now, so a
    /// missing one stops serve with one sentence before it listens.
    func turns(settings: CoreSettings) throws -> ChatTurns? {
        guard let provider else { return nil }
        let request = ChatRequest(
            provider: provider, model: model, baseURL: baseURL, apiKeyVariable: apiKeyEnv, credentialsFile: credentials,
            toolTimeout: .seconds(60), idleTimeout: .seconds(120))
        let limits = ChatTurns.Limits(concurrentTurns: maxTurns, turnTimeLimit: turnTimeout?.duration ?? .seconds(300))
        do {
            return try ChatTurns(settings: settings, base: request, limits: limits)
        } catch {
            throw Output.fail(error.message.replacingOccurrences(of: "--base-url", with: "--chat-base-url"), .usage)
        }
    }
}
