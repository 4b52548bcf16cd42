import ArgumentParser
import Dispatch
import Foundation
import HostscopeCore
import Synchronization
import ValueFormats

/// What the shell completion scripts (`hostscope --generate-completion-script bash|zsh|fish`) offer for host and
/// `HOST:PATH` arguments: ssh_config aliases (of `-F FILE` when the line has one) and remote paths listed over
/// SFTP with the line's connection options, never prompting (``ShellCompletion``).
enum Completions {
    /// A host: an alias of the ssh_config files, or `local`.
    static let host = CompletionKind.custom { words, index, prefix in
        let line = CompletionLine(words)
        return offered(ShellCompletion.hosts(prefix: line.unquoted(prefix), configFile: line.connection.configFile))
    }

    /// Jump hosts (`-J a,b`): aliases for the last of the list.
    static let jumpHosts = CompletionKind.custom { words, index, prefix in
        let line = CompletionLine(words)
        let text = line.unquoted(prefix)
        let head = text.lastIndex(of: ",").map { String(text[...$0]) } ?? ""
        return offered(
            ShellCompletion.hosts(prefix: String(text.dropFirst(head.count)), configFile: line.connection.configFile)
                .filter { $0 != "local" }.map { head + $0 })
    }

    /// A `HOST:PATH`: hosts followed by `:`, then the remote directory's entries.
    static let remotePath = CompletionKind.custom { words, index, prefix in
        let line = CompletionLine(words)
        let word = line.unquoted(prefix)
        let settings = line.connection
        let result = Lock<[String]>([])
        let done = DispatchSemaphore(value: 0)
        // The parser asks synchronously; the listing is async and runs on the pool while this thread (the main
        // one, no thread of the pool) waits, bounded by ShellCompletion's own timeout.
        Task.detached {
            let found = await ShellCompletion.remotePaths(word, settings: settings)
            result.withLock { $0 = found }
            done.signal()
        }
        done.wait()
        return offered(result.withLock { $0 })
    }

    /// Offers as the asking shell reads them: zsh's script hands them to `_describe`, which takes what follows a
    /// `:` for a description unless it is escaped.
    private static func offered(_ candidates: [String]) -> [String] {
        guard CompletionShell.requesting == .zsh else { return candidates }
        return candidates.map { $0.replacingOccurrences(of: ":", with: "\\:") }
    }
}

/// The words of a command line being completed, as the shell hands them over (quotes and escapes as typed), and the
/// connection options among them.
struct CompletionLine {
    let words: [String]

    init(_ words: [String]) {
        self.words = words
    }

    /// The connection options the line gives (`-F`, `-l`, `-p`, `-i`, `-J`, `--known-hosts`, `--password-env`, …),
    /// as far as they can be told apart: in `files ls`, `-l` is the long listing, and in `files grep`, `-i`, `-F` and
    /// `-l` are grep's.
    var connection: ConnectionSettings {
        var settings = ConnectionSettings()
        let command = words.dropFirst().prefix { !$0.hasPrefix("-") }.prefix(2).joined(separator: " ")
        let grep = command == "files grep"
        let listing = command == "files ls"
        var index = 1
        while index < words.count {
            let word = words[index]
            index += 1
            var name = word
            var value: String?
            if word.hasPrefix("--"), let equals = word.firstIndex(of: "=") {
                name = String(word[..<equals])
                value = String(word[word.index(after: equals)...])
            }
            func take() -> String? {
                if let value { return unquoted(value) }
                guard index < words.count else { return nil }
                defer { index += 1 }
                return unquoted(words[index])
            }
            switch name {
            case "--ssh-config": settings.configFile = take()
            case "-F" where !grep: settings.configFile = take()
            case "--user": settings.user = take()
            case "-l" where !listing && !grep: settings.user = take()
            case "-p", "--port": settings.port = take().flatMap { Int($0) }
            case "--identity": take().map { settings.identityFiles.append($0) }
            case "-i" where !grep: take().map { settings.identityFiles.append($0) }
            case "-J", "--jump": settings.jump = take()
            case "--known-hosts": settings.knownHostsFile = take()
            case "--password-env": settings.passwordEnvironmentVariable = take()
            case "--passphrase-env": settings.passphraseEnvironmentVariable = take()
            case "--connect-timeout": settings.connectTimeout = take().flatMap(DurationText.parse)
            default: break
            }
        }
        return settings
    }

    /// A word as the shell would pass it on: quotes removed, backslash escapes resolved.
    func unquoted(_ word: String) -> String {
        var result = ""
        var quote: Character?
        var escaped = false
        for character in word {
            if escaped {
                result.append(character)
                escaped = false
            } else if character == "\\", quote != "'" {
                escaped = true
            } else if let open = quote {
                if character == open { quote = nil } else { result.append(character) }
            } else if character == "'" || character == "\"" {
                quote = character
            } else {
                result.append(character)
            }
        }
        return result
    }
}
