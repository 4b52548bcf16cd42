public import AgentTracing
import Foundation

/// Where a command's extra request headers come from, read in one place: `name=value` options, headers
/// files named as `@FILE`, and environment variables in OpenTelemetry's `OTEL_EXPORTER_OTLP_HEADERS` form.
///
/// Every value read that may be a credential is a secret (``Redaction/headerSecrets(name:value:)``): every
/// value of a header named as a credential (`Authorization`, `x-api-key`, `*-token`), and every value of 8
/// characters or more whatever its header's name (`x-honeycomb-team` carries a key). It is registered with
/// the scrubber the moment it is read, so no message, span, export or stored row can hold it. Short values
/// under other names (`X-Scope-OrgID: 1`, a tenant) are not: registering `1` would redact every 1 of every
/// message and span. Options win over the environment: a header named by an option replaces the
/// environment's headers of that name; the environment's other headers stay.
///
/// A headers file holds one header per line, `name=value` or `name: value`, with blank lines and `#`
/// comments; like the credentials file it is refused unless only its owner can read it (``PrivateFile``).
/// A value given inline on the command line is readable by every local user while hostscope runs, so one
/// that looks like a credential comes with a warning (``ResolvedHeaders/warnings``).
public struct HeaderSources: Sendable {
    /// The option the headers are given with, for messages: `--otlp-header`, `--header`.
    public var option: String
    /// The option's values as given: `name=value`, or `@FILE` naming a headers file.
    public var arguments: [String]
    /// Variables holding `name=value,name2=value2` lists, most specific first; the first one set is read.
    public var environmentVariables: [String]
    /// The environment the variables are read from.
    public var environment: [String: String]
    /// What to say instead of an inline secret, after "put it in": e.g. `OTEL_EXPORTER_OTLP_HEADERS or a file
    /// (mode 0600) given as --otlp-header @FILE`.
    public var saferForm: String

    /// Creates sources.
    public init(
        option: String, arguments: [String], environmentVariables: [String] = [], environment: [String: String] = [:],
        saferForm: String? = nil
    ) {
        self.option = option
        self.arguments = arguments
        self.environmentVariables = environmentVariables
        self.environment = environment
        self.saferForm = saferForm ?? "a file (mode 0600) given as \(option) @FILE"
    }

    /// The OpenTelemetry variables for trace export headers, most specific first: the traces variable
    /// replaces the general one, as the OpenTelemetry SDKs do.
    public static let otlpTraceVariables = ["OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS"]
    /// The same for metric export headers.
    public static let otlpMetricsVariables = ["OTEL_EXPORTER_OTLP_METRICS_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS"]

    /// The headers of an OTLP exporter of `signal`: `option` (`--otlp-header`, `trace push --header`) and the
    /// signal's `OTEL_EXPORTER_OTLP_TRACES_HEADERS` / `OTEL_EXPORTER_OTLP_METRICS_HEADERS`, else
    /// `OTEL_EXPORTER_OTLP_HEADERS`.
    public static func otlp(
        option: String, arguments: [String], environment: [String: String], signal: OTLPSignal = .traces
    ) -> HeaderSources {
        HeaderSources(
            option: option, arguments: arguments,
            environmentVariables: signal == .traces ? otlpTraceVariables : otlpMetricsVariables,
            environment: environment,
            saferForm: "OTEL_EXPORTER_OTLP_HEADERS or in a file (mode 0600) given as \(option) @FILE")
    }

    /// Reads every source, registering each value with `secrets` as soon as it is read.
    public func resolve(
        registeringWith secrets: SecretScrubber = ProcessSecrets.scrubber
    ) throws(HeaderSourceError) -> ResolvedHeaders {
        var fromEnvironment: [(name: String, value: String)] = []
        if let variable = environmentVariables.first(where: { !(environment[$0] ?? "").isEmpty }),
            let list = environment[variable]
        {
            fromEnvironment = try Self.parseList(list, variable: variable, registeringWith: secrets)
        }
        var fromOptions: [(name: String, value: String)] = []
        var warnings: [String] = []
        for argument in arguments {
            if argument.hasPrefix("@") {
                fromOptions += try readFile(String(argument.dropFirst()), registeringWith: secrets)
                continue
            }
            let header = try Self.parseLine(Substring(argument), registeringWith: secrets) { problem in
                "a \(option) is name=value, as in 'Authorization=Bearer …', or @FILE naming a file of such lines; "
                    + "got one \(problem)"
            }
            if ArgumentSecrets.looksSecret(headerName: header.name, value: header.value) {
                warnings.append(
                    "the value of \(option) \(header.name) is on the command line, where every local user can read "
                        + "it (/proc/PID/cmdline) while hostscope runs; put it in \(saferForm)")
            }
            fromOptions.append(header)
        }
        let named = Set(fromOptions.map { $0.name.lowercased() })
        let headers = fromEnvironment.filter { !named.contains($0.name.lowercased()) } + fromOptions
        return ResolvedHeaders(headers: headers, warnings: warnings)
    }

    /// A headers file: `name=value` or `name: value` lines, blank lines and `#` comments.
    private func readFile(
        _ path: String, registeringWith secrets: SecretScrubber
    ) throws(HeaderSourceError) -> [(name: String, value: String)] {
        let what = "the headers file given to \(option)"
        let text: String
        do {
            text = try PrivateFile.text(at: path, describedAs: what)
        } catch {
            throw HeaderSourceError(error.message)
        }
        var headers: [(name: String, value: String)] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces.union(CharacterSet(charactersIn: "\r")))
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            headers.append(
                try Self.parseLine(Substring(trimmed), registeringWith: secrets, allowColon: true) { problem in
                    "\(what) \(path): line \(number + 1) is not name=value or name: value (it is one \(problem))"
                })
        }
        return headers
    }

    /// `name=value` (or `name: value` when `allowColon`), the value registered before anything can fail.
    private static func parseLine(
        _ line: Substring, registeringWith secrets: SecretScrubber, allowColon: Bool = false,
        problem: (String) -> String
    ) throws(HeaderSourceError) -> (name: String, value: String) {
        let separator = line.firstIndex { $0 == "=" || (allowColon && $0 == ":") }
        guard let separator else { throw HeaderSourceError(problem("without '='")) }
        let value = String(line[line.index(after: separator)...]).trimmingCharacters(in: .whitespaces)
        let name = String(line[..<separator]).trimmingCharacters(in: .whitespaces)
        for secret in Redaction.headerSecrets(name: name, value: value) { secrets.register(secret) }
        try check(name: name, value: value, problem: problem)
        return (name, value)
    }

    /// `OTEL_EXPORTER_OTLP_HEADERS`: comma-separated `name=value` pairs, each part percent-decoded and trimmed
    /// (the W3C Baggage form the OpenTelemetry specification names).
    static func parseList(
        _ list: String, variable: String, registeringWith secrets: SecretScrubber
    ) throws(HeaderSourceError) -> [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = []
        for (index, entry) in list.split(separator: ",", omittingEmptySubsequences: false).enumerated() {
            if entry.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
            let problem = { (problem: String) in
                "\(variable) is a comma-separated list of name=value pairs; entry \(index + 1) is one \(problem)"
            }
            guard let equals = entry.firstIndex(of: "=") else { throw HeaderSourceError(problem("without '='")) }
            let value = Redaction.percentDecoded(entry[entry.index(after: equals)...], plusAsSpace: false)
                .trimmingCharacters(in: .whitespaces)
            let name = Redaction.percentDecoded(entry[..<equals], plusAsSpace: false).trimmingCharacters(
                in: .whitespaces)
            // The value as written too: a message could quote it still encoded.
            let written = String(entry[entry.index(after: equals)...]).trimmingCharacters(in: .whitespaces)
            for secret in Redaction.headerSecrets(name: name, value: value)
                + Redaction.headerSecrets(name: name, value: written)
            {
                secrets.register(secret)
            }
            try check(name: name, value: value, problem: problem)
            headers.append((name, value))
        }
        return headers
    }

    /// A header name is an HTTP token; a value holds no line break (it would start another header).
    private static func check(
        name: String, value: String, problem: (String) -> String
    ) throws(HeaderSourceError) {
        guard !name.isEmpty else { throw HeaderSourceError(problem("without a name before '='")) }
        let tokenCharacters = "!#$%&'*+-.^_`|~"
        let isToken = { (scalar: Unicode.Scalar) in
            isAlphanumeric(scalar) || tokenCharacters.unicodeScalars.contains(scalar)
        }
        guard name.unicodeScalars.allSatisfy(isToken) else {
            throw HeaderSourceError(problem("named '\(name)', which is not a header name (letters, digits, - and _)"))
        }
        guard !value.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\r\n" }) else {
            throw HeaderSourceError(problem("with a line break in the value of \(name)"))
        }
    }

    private static func isAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
    }
}

/// The headers read from every source, in the order they are sent.
public struct ResolvedHeaders: Sendable {
    /// Name and value of each header.
    public var headers: [(name: String, value: String)]
    /// One sentence per inline value that looks like a credential, for stderr.
    public var warnings: [String]

    /// Creates resolved headers.
    public init(headers: [(name: String, value: String)] = [], warnings: [String] = []) {
        self.headers = headers
        self.warnings = warnings
    }
}

/// A header source that cannot be used: one sentence naming the source (never a value) and what to do.
public struct HeaderSourceError: Error, Sendable, CustomStringConvertible {
    /// What happened and what to do.
    public var message: String

    /// Creates an error.
    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
