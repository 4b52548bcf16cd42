/// One `Match` line, checked when the file is read and evaluated for each host as OpenSSH's `match_cfg_line`
/// evaluates it.
///
/// Criteria are read left to right and all must hold; `!` negates one. `host` is matched against the host
/// name as resolved so far (`HostName` with `%h`, else the name given) and `originalhost` against the name
/// given, both without regard to case; `user` against the remote user as resolved so far and `localuser`
/// against the local one, case and all. `all` stands alone or after one other criterion. `canonical` and
/// `final` hold only on the second reading of the files (see ``SSHConfig/resolve(_:overrides:)``).
///
/// `exec`, `localnetwork`, `tagged`, `command`, `sessiontype` and `version` are OpenSSH criteria hostscope
/// cannot evaluate: it runs no commands from ssh_config, does not look at local addresses, does not apply
/// `Tag`, and is not `ssh`. A line whose outcome for a host depends on one is refused for that host rather
/// than guessed; where another criterion already fails, the block simply does not apply, as in `ssh`.
struct MatchLine: Sendable, Hashable {
    enum Criterion: Sendable, Hashable {
        case all
        case canonical
        case final
        case host(String)
        case originalHost(String)
        case user(String)
        case localUser(String)
        /// A criterion OpenSSH evaluates and hostscope cannot; `keyword` in lower case.
        case unsupported(keyword: String, argument: String)
    }

    struct Term: Sendable, Hashable {
        var criterion: Criterion
        var negated: Bool
        /// The criterion's name as written, without `!`, for messages.
        var spelling: String
    }

    /// What a `Match` line is evaluated against.
    struct Subject {
        /// `HostName` with `%h` expanded, or the host as given; on the final pass, the name connected to.
        var host: String
        /// The host as given on the command line.
        var originalHost: String
        /// The remote user as resolved so far, else the local user.
        var user: String
        var localUser: String
        var isFinalPass: Bool
    }

    var terms: [Term]
    var directive: SSHConfigDirective

    /// Criteria that take a pattern and that hostscope evaluates.
    private static let patternCriteria: Set<String> = ["host", "originalhost", "user", "localuser"]

    /// Why hostscope cannot evaluate each criterion it knows from OpenSSH but does not support.
    static let unsupportedCriteria: [String: String] = [
        "exec": "hostscope runs no commands from ssh_config",
        "localnetwork": "hostscope does not look at this machine's network addresses",
        "tagged": "hostscope does not apply Tag",
        "command": "hostscope runs its own commands, not the one given to ssh",
        "sessiontype": "hostscope opens no ssh session type of its own",
        "version": "hostscope is not OpenSSH",
    ]

    init(_ directive: SSHConfigDirective) throws(SSHError) {
        self.directive = directive
        let location = directive.location
        let arguments = directive.arguments
        guard !arguments.isEmpty else {
            throw .config(
                location, "Match needs a criterion; write Match host PATTERN, Match user PATTERN or Match all")
        }
        var terms: [Term] = []
        var index = 0
        var attributes = 0
        while index < arguments.count {
            let written = arguments[index]
            index += 1
            let negated = written.hasPrefix("!")
            var name = negated ? String(written.dropFirst()) : written
            // OpenSSH 9.4 and later also read `host=PATTERN`; 9.2 would refuse it, hostscope takes both.
            var inlineArgument: String? = nil
            if let equals = name.firstIndex(of: "="),
                Self.patternCriteria.union(Self.unsupportedCriteria.keys).contains(name[..<equals].lowercased())
            {
                inlineArgument = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            let keyword = name.lowercased()
            if keyword == "all" {
                // As OpenSSH: `all` may follow one criterion (`Match canonical all`) and nothing may follow it.
                guard attributes <= 1, index == arguments.count else {
                    throw .config(
                        location,
                        "Match \(written) cannot be combined with other criteria; write Match all alone, or "
                            + "after canonical or final")
                }
                terms.append(Term(criterion: .all, negated: negated, spelling: name))
                break
            }
            attributes += 1
            if keyword == "canonical" || keyword == "final" {
                terms.append(
                    Term(criterion: keyword == "final" ? .final : .canonical, negated: negated, spelling: name))
                continue
            }
            guard Self.patternCriteria.contains(keyword) || Self.unsupportedCriteria[keyword] != nil else {
                throw .config(
                    location,
                    "\"\(name)\" is not a Match criterion; use host, originalhost, user, localuser, canonical, final "
                        + "or all")
            }
            let argument: String
            if let inlineArgument {
                argument = inlineArgument
            } else if index < arguments.count {
                argument = arguments[index]
                index += 1
            } else {
                argument = ""
            }
            guard !argument.isEmpty else {
                throw .config(location, "Match \(name) needs a value; write Match \(name) PATTERN")
            }
            let criterion: Criterion =
                switch keyword {
                case "host": .host(argument)
                case "originalhost": .originalHost(argument)
                case "user": .user(argument)
                case "localuser": .localUser(argument)
                default: .unsupported(keyword: keyword, argument: argument)
                }
            terms.append(Term(criterion: criterion, negated: negated, spelling: name))
        }
        self.terms = terms
    }

    /// Whether the line asks for the second reading of the files. OpenSSH 9.2 asks whenever `final` is
    /// read, negated or not, whether or not the line applies.
    var requestsFinalPass: Bool {
        terms.contains { $0.criterion == .final }
    }

    /// Whether the block applies to `subject`.
    ///
    /// - Throws: an `SSHError` with code `.config`, naming the line, when the outcome depends on a criterion
    ///   hostscope cannot evaluate.
    func applies(to subject: Subject) throws(SSHError) -> Bool {
        var result = true
        var undecided: Term? = nil
        for term in terms {
            let holds: Bool
            switch term.criterion {
            case .all: holds = true
            case .canonical, .final: holds = subject.isFinalPass
            case .host(let patterns): holds = HostPattern.matches(hostName: subject.host, patternList: patterns)
            case .originalHost(let patterns):
                holds = HostPattern.matches(hostName: subject.originalHost, patternList: patterns)
            case .user(let patterns): holds = HostPattern.matches(subject.user, patternList: patterns)
            case .localUser(let patterns): holds = HostPattern.matches(subject.localUser, patternList: patterns)
            case .unsupported:
                if undecided == nil { undecided = term }
                continue
            }
            if holds == term.negated {
                result = false
            }
        }
        guard result, let undecided, case .unsupported(let keyword, let argument) = undecided.criterion else {
            return result
        }
        let reason = Self.unsupportedCriteria[keyword] ?? "hostscope cannot evaluate it"
        throw .config(
            directive.location,
            "Match \(undecided.negated ? "!" : "")\(undecided.spelling) \"\(argument)\" decides whether this block "
                + "applies to \(subject.originalHost), and \(reason); rewrite the condition with host, originalhost, "
                + "user or localuser, or give hostscope a config without it (-F FILE)")
    }
}
