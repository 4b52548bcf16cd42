public import Foundation
import RemoteFiles
import SSHTransport
import ValueFormats

/// What a shell's completion offers for hostscope's arguments: host aliases from ssh_config, and remote paths
/// listed over SFTP for `HOST:PATH`.
///
/// Completion runs while a person waits at their prompt and prints into it, so it never asks for anything
/// (no password or passphrase prompt, as OpenSSH's `BatchMode`), never records a host key, stores no span, gives up
/// after ``pathTimeout``, and on any failure offers nothing rather than saying why.
public enum ShellCompletion {
    /// How long listing remote paths may take, connecting included.
    public static let pathTimeout: Duration = .seconds(4)
    /// The most remote names offered: a huge directory is no list to choose from.
    public static let maximumPaths = 2000

    /// The ssh_config aliases (names without wildcards in `Host` lines of the files `ssh` reads, or of
    /// `configFile`) that start with `prefix`, and `local`.
    public static func hosts(prefix: String, configFile: String?) -> [String] {
        let config = try? SSHConfig.load(configFile: configFile)
        let names = (config?.hostAliases ?? []) + [HostTarget.localName]
        return names.filter { $0.hasPrefix(prefix) }
    }

    /// The completions of a `HOST:PATH` word: with no `:` yet, the hosts followed by `:`; else the entries of the
    /// directory the path names up to its last `/` (the remote home without one) whose names start with what
    /// follows it, as `HOST:PATH` again, directories ending in `/`. Hidden names only when a `.` starts the name.
    ///
    /// - Parameter settings: the connection options on the command line being completed; prompts, host key
    ///   recording and diagnostics are turned off here whatever they say.
    public static func remotePaths(
        _ word: String, settings: ConnectionSettings,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) async -> [String] {
        guard let colon = hostSeparator(in: word) else {
            return hosts(prefix: word, configFile: settings.configFile)
                .filter { $0 != HostTarget.localName }.map { $0 + ":" }
        }
        let host = String(word[..<colon])
        let path = String(word[word.index(after: colon)...])
        let directory = path.lastIndex(of: "/").map { String(path[...$0]) } ?? ""
        let partial = String(path.dropFirst(directory.count))
        var quiet = settings
        quiet.prompter = nil
        quiet.recordsHostKeys = false
        quiet.configWarning = nil
        quiet.hostKeyRecorded = nil
        quiet.debug = nil
        quiet.connectTimeout = min(settings.connectTimeout ?? pathTimeout, pathTimeout)
        let core = CoreSettings(environment: environment, storesHistory: false, connection: quiet)
        let names = await withTaskGroup(of: [String]?.self) { group -> [String] in
            group.addTask {
                try? await FilesService(settings: core).with(
                    host + ":" + (directory.isEmpty ? "." : directory), root: nil
                ) {
                    session in
                    var names: [String] = []
                    var options = ListOptions(includeHidden: partial.hasPrefix("."), readLinkTargets: false)
                    options.batchSize = 500
                    _ = try await session.browser.list(session.path, options: options) { batch in
                        for entry in batch where entry.escapedName.hasPrefix(partial) && names.count < maximumPaths {
                            names.append(entry.escapedName + (entry.type == .dir ? "/" : ""))
                        }
                    }
                    return names
                }
            }
            group.addTask {
                try? await Task.sleep(for: pathTimeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? []
        }
        return names.map { host + ":" + directory + $0 }
    }

    /// Where the host ends in an scp-style `HOST:PATH` word: the first `:` outside `[…]` (an IPv6 address), or
    /// `nil` when there is none or the word is a local path (`./a:b`, `/x:y`).
    static func hostSeparator(in word: String) -> String.Index? {
        guard !word.hasPrefix("/"), !word.hasPrefix("."), !word.hasPrefix("~") else { return nil }
        var inBrackets = false
        for index in word.indices {
            switch word[index] {
            case "[": inBrackets = true
            case "]": inBrackets = false
            case ":" where !inBrackets: return index
            case "/" where !inBrackets: return nil
            default: break
            }
        }
        return nil
    }
}
