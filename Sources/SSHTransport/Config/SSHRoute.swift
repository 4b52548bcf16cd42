/// How a session reaches its host: straight over TCP, through a `ProxyCommand`, or through a jump host.
public indirect enum SSHRoute: Sendable {
    /// A TCP connection to `hostName` and `port`.
    case direct
    /// The SSH stream runs over the standard input and output of a local command (`ProxyCommand`).
    case command(SSHProxyCommand)
    /// The SSH stream runs over a `direct-tcpip` channel of a session to this jump host, which has its own
    /// route, host key check and authentication (`ProxyJump`, `-J`).
    case jump(SSHConnectionOptions)
    /// The way to the host cannot be worked out (a `ProxyJump` loop, a jump host whose configuration
    /// fails): connecting fails with this error and connects nothing.
    case unusable(SSHError)

    /// The jump hosts on the way, the first one connected to first.
    public var jumpHosts: [SSHConnectionOptions] {
        guard case .jump(let hop) = self else { return [] }
        return hop.route.jumpHosts + [hop]
    }

    /// Whether `other` goes the same way: both direct, the same command, or the same jump hosts with the same
    /// users, keys, host key checks and ways to them (what lets two targets share a jump session).
    public func isSame(as other: SSHRoute) -> Bool {
        switch (self, other) {
        case (.direct, .direct): true
        case (.command(let a), .command(let b)): a.command == b.command
        case (.jump(let a), .jump(let b)): a.sharingKey == b.sharingKey
        case (.unusable(let a), .unusable(let b)): a.code == b.code && a.message == b.message
        default: false
        }
    }
}

/// A `ProxyCommand` ready to run: `/bin/sh -c 'exec COMMAND'`, its standard input and output carrying the
/// SSH stream.
public struct SSHProxyCommand: Sendable, Hashable {
    /// The command as configured, tokens unexpanded, for messages.
    public var configured: String
    /// The command with `%h %k %n %p %r %%` expanded.
    public var command: String
    /// The line it came from.
    public var origin: SSHConfigLocation?

    /// A command ready to run; `configured` defaults to `command`.
    public init(command: String, configured: String? = nil, origin: SSHConfigLocation? = nil) {
        self.command = command
        self.configured = configured ?? command
        self.origin = origin
    }

    /// `ProxyCommand ssh -W %h:%p bastion` (config line 7), for messages.
    var description: String {
        "ProxyCommand \(configured)" + (origin.map { " (\($0))" } ?? "")
    }
}

/// A `ProxyJump` list or `-J` value: `[user@]host[:port]` or `ssh://[user@]host[:port]` hops separated by
/// commas, in the order they are visited.
struct SSHJumpHops {
    var hops: [SSHDestination]

    /// - Throws: a `.config` error saying what is wrong with the list, without naming where it came from.
    init(parsing value: String) throws(SSHError) {
        var hops: [SSHDestination] = []
        for item in value.split(separator: ",", omittingEmptySubsequences: false) {
            guard !item.isEmpty else {
                throw SSHError(.config, "a hop is empty; separate hosts with single commas")
            }
            hops.append(try SSHDestination(parsing: String(item)))
        }
        self.hops = hops
    }
}
