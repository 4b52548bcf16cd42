public import AgentTracing
public import Foundation
import Storage

/// Where the core says what a person should know that is not a result: warnings, notes and others'
/// notices. A face decides where they go (the command line prints them on stderr; a service logs them).
public struct Diagnostics: Sendable {
    /// Something went wrong but the work goes on (a span export that failed, an unwritable file).
    public var warning: @Sendable (String) -> Void
    /// A failure that ends one part of the work (the output file of a watch), said once when it happens.
    public var error: @Sendable (String) -> Void
    /// Something hostscope changed that the user should know of (a database's mode tightened).
    public var note: @Sendable (String) -> Void
    /// Each step of reaching a host, as `ssh -v` prints them (`-v`): the ssh_config blocks used, the address, jump
    /// hosts, the host key and where it was found, the authentication methods tried, each command and how long it
    /// took; `nil` when nobody asked. Never a secret: the steps name keys by their files, never their passphrases.
    public var debug: (@Sendable (String) -> Void)?

    /// Diagnostics sent to three handlers, and steps to a fourth when one is given.
    public init(
        warning: @escaping @Sendable (String) -> Void, error: @escaping @Sendable (String) -> Void,
        note: @escaping @Sendable (String) -> Void, debug: (@Sendable (String) -> Void)? = nil
    ) {
        self.warning = warning
        self.error = error
        self.note = note
        self.debug = debug
    }

    /// Diagnostics nobody reads (tests, and work whose remarks do not matter).
    public static let silent = Diagnostics(warning: { _ in }, error: { _ in }, note: { _ in })
}

/// What every entry point of the core shares: the process environment, the database, how hosts are
/// reached, how spans are recorded, and where remarks go.
public struct CoreSettings: Sendable {
    /// The process environment: `HOSTSCOPE_DB`, `XDG_DATA_HOME`, `HOSTSCOPE_TRACE_BUFFER`, `OTEL_*`.
    public var environment: [String: String]
    /// The database as given (`--db`); `nil` for `$HOSTSCOPE_DB`, else the XDG default.
    public var database: String?
    /// Whether records, conversations and spans are stored at all (`--no-history` turns this off).
    public var storesHistory: Bool
    /// How hosts are reached: `--user`, `--port`, `--identity`, ssh_config.
    public var connection: ConnectionSettings
    /// The span ring's capacity (`--trace-buffer`); `nil` for `$HOSTSCOPE_TRACE_BUFFER`, else 10,000.
    public var traceBuffer: Int?
    /// Where spans (and a watch's metrics) are also sent while the command runs, if anywhere.
    public var export: OTLPExportSettings?
    /// Attributes added to the resource of every span and metric (`OTEL_RESOURCE_ATTRIBUTES`).
    public var resourceAttributes: [Attribute]
    /// Where warnings and notes go.
    public var diagnostics: Diagnostics

    /// Settings of a command run in `environment`.
    public init(
        environment: [String: String] = ProcessInfo.processInfo.environment, database: String? = nil,
        storesHistory: Bool = true, connection: ConnectionSettings = ConnectionSettings(), traceBuffer: Int? = nil,
        export: OTLPExportSettings? = nil, resourceAttributes: [Attribute] = [], diagnostics: Diagnostics = .silent
    ) {
        self.environment = environment
        self.database = database
        self.storesHistory = storesHistory
        self.connection = connection
        self.traceBuffer = traceBuffer
        self.export = export
        self.resourceAttributes = resourceAttributes
        self.diagnostics = diagnostics
    }

    /// The database file: `--db`, else `$HOSTSCOPE_DB`, else `$XDG_DATA_HOME/hostscope/hostscope.sqlite`.
    public var databasePath: String {
        DatabaseLocation.path(explicit: database, environment: environment)
    }

    /// The tracing of a command whose spans go to the database (unless history is off), kept for
    /// `retention` when given.
    public func traceSetup(retention: Duration? = nil) -> TraceSetup {
        TraceSetup(
            capacity: traceBuffer ?? TraceRuntime.capacity(fromEnvironment: environment) ?? TraceSetup.defaultCapacity,
            databasePath: storesHistory ? databasePath : nil, retention: retention, otlp: export?.traces,
            resourceAttributes: resourceAttributes)
    }
}

/// A request the core could not carry out: one sentence saying what happened and what to do.
public struct CoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure it is, for a face to choose its answer (an exit status, an HTTP status).
    public enum Code: Sendable, Equatable {
        /// The request cannot be carried out as given (a host that does not parse, a missing option).
        case invalidRequest
        /// Nothing is stored yet where the request looks (no database, no such span or host).
        case notFound
        /// Something failed while carrying it out (a database that cannot be opened, a file).
        case failed
        /// The operator allowed nothing of the kind (`serve` with no `--files-root`).
        case notAllowed
        /// As many such requests are under way as may be (a host's file sessions); try again later.
        case busy
        /// The request is larger than is allowed (a download over the cap).
        case tooLarge
    }

    /// What kind of failure it is.
    public var code: Code
    /// The sentence to show.
    public var message: String

    /// An error with its sentence.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
