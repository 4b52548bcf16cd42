/// ssh_config's instruction to reach a host through something else: `ProxyJump` or `ProxyCommand`, as
/// written; ``SSHRoute`` is what a session follows.
public struct SSHProxy: Sendable, Hashable {
    /// Which keyword set it.
    public enum Kind: Sendable, Hashable {
        /// `ProxyJump host[,host…]`.
        case jump
        /// `ProxyCommand command`.
        case command
    }

    public var kind: Kind
    /// The value as written (`bastion`, `ssh -W %h:%p gw`).
    public var value: String
    /// The line it came from.
    public var origin: SSHConfigLocation?

    /// A proxy as configured.
    public init(kind: Kind, value: String, origin: SSHConfigLocation? = nil) {
        self.kind = kind
        self.value = value
        self.origin = origin
    }

    /// Whether it is `none`, which asks for a direct connection.
    var isNone: Bool {
        value.lowercased() == "none"
    }

    /// The keyword as ssh_config spells it.
    public var keyword: String {
        switch kind {
        case .jump: "ProxyJump"
        case .command: "ProxyCommand"
        }
    }
}
