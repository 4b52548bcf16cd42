/// A file argument of `hostscope files`: a path on a host, written as scp writes it or as an `sftp://` URL.
public struct FileTarget: Sendable, Hashable, CustomStringConvertible {
    /// The host holding the path; `.local` for a plain local path.
    public var host: HostTarget
    /// The path: absolute, or relative to the user's home directory (`.` is the home directory itself).
    public var path: String

    /// A path on a host, as given.
    public init(host: HostTarget, path: String) {
        self.host = host
        self.path = path
    }

    /// Reads the forms scp and sftp take:
    /// - `HOST:PATH` and `USER@HOST:PATH` (`web1:/var/log`, `me@db1:logs`, `[::1]:/srv`,
    ///   `me@[fe80::1%eth0]:/srv`); an empty path is the home directory. As in scp, the host ends at the
    ///   first `:` outside brackets, and a `/` before any such `:` makes the whole argument a local path, as
    ///   does a leading `:`. `local:PATH` is a path on this machine.
    /// - `sftp://[USER@]HOST[:PORT][/PATH]`: user and path percent-decoded. `/PATH` is absolute as in the
    ///   SSH URI draft (and curl), `/~/PATH` is relative to the home directory, and no path is the home
    ///   directory. (OpenSSH's `sftp` reads every URL path as relative to home.)
    /// - anything else: a local path.
    public init(parsing argument: String) throws(SSHError) {
        if let url = try SSHDestination.url(parsing: argument, schemes: ["sftp"]) {
            host = .remote(url.destination)
            if url.path.isEmpty || url.path == "/~" || url.path == "/~/" {
                path = "."
            } else if url.path.hasPrefix("/~/") {
                path = String(url.path.dropFirst(3))
            } else {
                path = url.path
            }
            return
        }
        guard let colon = Self.hostSeparator(in: argument) else {
            host = .local
            path = argument
            return
        }
        let hostPart = argument[..<colon]
        let pathPart = argument[argument.index(after: colon)...]
        path = pathPart.isEmpty ? "." : String(pathPart)
        if hostPart == HostTarget.localName {
            host = .local
            return
        }
        var rest = hostPart
        var user: String? = nil
        if let at = rest.lastIndex(of: "@") {
            user = try HostSyntax.user(rest[..<at], in: argument)
            rest = rest[rest.index(after: at)...]
        }
        if rest.hasPrefix("["), rest.hasSuffix("]") {
            rest = rest.dropFirst().dropLast()
        }
        host = .remote(SSHDestination(host: try HostSyntax.host(rest, in: argument), user: user))
    }

    /// scp's `colon()`: the `:` that ends the host, if the argument names a remote path at all.
    private static func hostSeparator(in argument: String) -> String.Index? {
        guard !argument.hasPrefix(":") else { return nil }
        var bracketed = argument.hasPrefix("[")
        var index = argument.startIndex
        while index < argument.endIndex {
            let character = argument[index]
            let next = argument.index(after: index)
            if character == "@", next < argument.endIndex, argument[next] == "[" {
                bracketed = true
            }
            if character == "]", bracketed, next < argument.endIndex, argument[next] == ":" {
                return next
            }
            if character == ":", !bracketed {
                return index
            }
            if character == "/" {
                return nil
            }
            index = next
        }
        return nil
    }

    /// The target as an argument that parses back to it: scp form, or an `sftp://` URL when a port is set.
    public var description: String {
        switch host {
        case .local:
            // A local path that scp would read as remote gets a `./` in front.
            if Self.hostSeparator(in: path) != nil || path.hasPrefix("sftp://") {
                return "./" + path
            }
            return path
        case .remote(let destination):
            guard let port = destination.port else {
                return destination.description + ":" + (path == "." ? "" : path)
            }
            var url = "sftp://"
            if let user = destination.user {
                url += PercentEncoding.encode(user, keeping: []) + "@"
            }
            url += destination.host.contains(":") ? "[\(destination.host)]" : destination.host
            url += ":\(port)"
            let absolute = path.hasPrefix("/") ? path : (path == "." ? "/~/" : "/~/" + path)
            return url + PercentEncoding.encode(absolute, keeping: [UInt8(ascii: "/")])
        }
    }
}
