import HostStats
import HostscopeCore

/// hostscope's exit statuses: scripts branch on them, so each failure class has its own.
enum ExitStatus: Int32, Sendable, CaseIterable {
    case success = 0
    /// Anything not covered below (bad input file, unwritable output …).
    case failure = 1
    /// Usage errors, every one of them: bad arguments, missing or unreadable files named by them, a bad
    /// ssh_config. 64 (`EX_USAGE`), the status of the argument parser's own validation, so that scripts see
    /// one status whichever part of hostscope found the mistake.
    case usage = 64
    /// DNS, TCP or SSH handshake failure, or a dropped connection.
    case connect = 3
    case auth = 4
    case hostKey = 5
    /// A command on the host failed, or its output could not be read.
    case collect = 6
    case timeout = 7
    /// `hostscope files`: a remote path could not be read (missing, permission denied, outside
    /// `--root`, a symbolic link loop, changed while read).
    case file = 8
    /// `hostscope chat`: the language model provider failed or refused the turn (API key, model name, rate
    /// limit, server error, timeout, a stream that broke off) or the tool loop hit its limit.
    case chat = 9
    /// Stopped by Ctrl-C (128 + SIGINT, as a shell reports it): a download interrupted, its partial file kept.
    case interrupted = 130

    init(_ kind: FailureKind) {
        switch kind {
        case .connect: self = .connect
        case .auth: self = .auth
        case .hostKey: self = .hostKey
        case .command, .parse: self = .collect
        case .timeout: self = .timeout
        }
    }

    /// The status of a run whose hosts produced `records`: success when all succeeded, else
    /// the status of the first failure in argument order.
    init(records: [SnapshotRecord]) {
        for record in records {
            if case .failure(let failure) = record {
                self.init(failure.kind)
                return
            }
        }
        self = .success
    }

    /// The status of a request the core could not carry out.
    init(_ error: CoreError) {
        switch error.code {
        case .invalidRequest, .notAllowed: self = .usage
        case .notFound, .failed, .busy, .tooLarge: self = .failure
        }
    }
}
