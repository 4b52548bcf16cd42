/// The algorithm lists of ssh_config: `Ciphers`, `MACs`, `KexAlgorithms` and `HostKeyAlgorithms`, as
/// written (a first value wins, as for every keyword).
///
/// Each list follows ssh_config(5): a plain list replaces the default set, `+list` appends to it,
/// `-list` removes from it and `^list` puts its names at its head; names may be patterns (`aes*-ctr`).
/// The default set is what libssh2 1.10 supports, in hostscope's order (``AlgorithmList``). Names that
/// libssh2 does not implement (`chacha20-poly1305@openssh.com`, the `-etm` MACs, `sntrup761x25519-sha512`)
/// are passed over, so a hardened list that also names an older algorithm still connects; a list that
/// leaves nothing libssh2 has is an error that names what it does have.
public struct SSHAlgorithmPreferences: Sendable, Hashable {
    public var ciphers: String?
    public var macs: String?
    public var kexAlgorithms: String?
    public var hostKeyAlgorithms: String?
    /// Where each list was configured (`~/.ssh/config line 12`), for messages.
    public var sources: [SSHAlgorithmKind: String] = [:]

    public init(
        ciphers: String? = nil, macs: String? = nil, kexAlgorithms: String? = nil, hostKeyAlgorithms: String? = nil
    ) {
        self.ciphers = ciphers
        self.macs = macs
        self.kexAlgorithms = kexAlgorithms
        self.hostKeyAlgorithms = hostKeyAlgorithms
    }

    /// The configured list of one kind.
    public subscript(kind: SSHAlgorithmKind) -> String? {
        get {
            switch kind {
            case .cipher: ciphers
            case .mac: macs
            case .kex: kexAlgorithms
            case .hostKey: hostKeyAlgorithms
            }
        }
        set {
            switch kind {
            case .cipher: ciphers = newValue
            case .mac: macs = newValue
            case .kex: kexAlgorithms = newValue
            case .hostKey: hostKeyAlgorithms = newValue
            }
        }
    }
}

/// A kind of algorithm an SSH connection negotiates.
public enum SSHAlgorithmKind: String, Sendable, Hashable, CaseIterable {
    case cipher, mac, kex, hostKey

    /// The ssh_config keyword that lists this kind.
    public var keyword: String {
        switch self {
        case .cipher: "Ciphers"
        case .mac: "MACs"
        case .kex: "KexAlgorithms"
        case .hostKey: "HostKeyAlgorithms"
        }
    }

    /// The keyword as the config parser sees it (lower case).
    var lowercasedKeyword: String { keyword.lowercased() }

    /// What one algorithm of this kind is called in messages.
    var noun: String {
        switch self {
        case .cipher: "cipher"
        case .mac: "MAC"
        case .kex: "key exchange method"
        case .hostKey: "host key algorithm"
        }
    }
}

/// Turns an ssh_config algorithm list into the list to propose, as OpenSSH's `kex_assemble_names` does.
enum AlgorithmList {
    /// Why a list cannot be used.
    enum Failure: Error, Equatable {
        /// The list is empty or has an empty name (`aes128-ctr,,aes256-ctr`).
        case malformed
        /// Nothing the list leaves is supported.
        case nothingSupported
    }

    /// The names to propose, in order, without duplicates.
    ///
    /// - Parameters:
    ///   - spec: the configured value, `nil` for none (the default set).
    ///   - defaults: the default set, in order of preference; every name in it is supported.
    ///   - supported: every name the library implements (patterns are matched against these).
    static func resolve(_ spec: String?, defaults: [String], supported: [String]) throws(Failure) -> [String] {
        guard let spec else { return defaults }
        guard let first = spec.first else { throw .malformed }
        let body = "+-^".contains(first) ? String(spec.dropFirst()) : spec
        let patterns = body.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard !patterns.contains(where: \.isEmpty) else { throw .malformed }

        var order: [String]
        switch first {
        case "+": order = defaults + patterns
        case "^": order = patterns + defaults
        case "-":
            let removed = defaults.filter { name in patterns.contains { matches(name, pattern: $0) } }
            order = defaults.filter { !removed.contains($0) }
        default: order = patterns
        }
        var result: [String] = []
        for pattern in order {
            for name in supported where matches(name, pattern: pattern) && !result.contains(name) {
                result.append(name)
            }
        }
        guard !result.isEmpty else { throw .nothingSupported }
        return result
    }

    /// OpenSSH's `match_pattern`: `*` any run of characters, `?` one character, case-sensitive.
    static func matches(_ name: String, pattern: String) -> Bool {
        let name = Array(name.utf8)
        let pattern = Array(pattern.utf8)
        var nameIndex = 0
        var patternIndex = 0
        var star: (pattern: Int, name: Int)?
        while nameIndex < name.count {
            if patternIndex < pattern.count,
                pattern[patternIndex] == UInt8(ascii: "?") || pattern[patternIndex] == name[nameIndex]
            {
                nameIndex += 1
                patternIndex += 1
            } else if patternIndex < pattern.count, pattern[patternIndex] == UInt8(ascii: "*") {
                star = (patternIndex, nameIndex)
                patternIndex += 1
            } else if let backtrack = star {
                patternIndex = backtrack.pattern + 1
                nameIndex = backtrack.name + 1
                star = (backtrack.pattern, backtrack.name + 1)
            } else {
                return false
            }
        }
        while patternIndex < pattern.count, pattern[patternIndex] == UInt8(ascii: "*") { patternIndex += 1 }
        return patternIndex == pattern.count
    }
}
