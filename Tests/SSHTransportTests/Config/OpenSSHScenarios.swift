/// Config files and the host arguments to resolve against them, to be read by both `ssh -G` and hostscope.
/// Files are written under a fresh home directory; `{{HOME}}` in a file stands for it.
struct OpenSSHScenario: Sendable, CustomStringConvertible {
    struct Invocation: Sendable {
        var host: String
        /// `-l` for `ssh`, `--user` for hostscope.
        var user: String? = nil
        /// `-p` for `ssh`, `--port` for hostscope.
        var port: Int? = nil
    }

    var name: String
    /// Paths relative to the home directory, and their text; `.ssh/config` is the file given to `-F`.
    var files: [String: String]
    var invocations: [Invocation]
    var variables: [String: String] = [:]

    var description: String { name }

    static let configPath = ".ssh/config"

    static let all: [OpenSSHScenario] = [
        firstValueWins, negation, includes, tokensAndQuotes, keywordSpellings, matchCriteria, finalPass, proxies,
    ]

    static let firstValueWins = OpenSSHScenario(
        name: "first value wins over several patterns per line",
        files: [
            configPath: """
            Host web1 web2
                HostName %h.Example.com
                User deploy
                IdentityFile ~/.ssh/id_%h_%r
            Host web*
                Port 2222
                User ignored
                IdentityFile ~/.ssh/web_common
                StrictHostKeyChecking accept-new
            Host *
                ServerAliveInterval 30
                ServerAliveCountMax 5
                ConnectTimeout 1m
                IdentityFile ~/.ssh/web_common
            """
        ],
        invocations: [
            Invocation(host: "web1"), Invocation(host: "web2"), Invocation(host: "web9"), Invocation(host: "other"),
            Invocation(host: "Web1"), Invocation(host: "root@web1"), Invocation(host: "web1", user: "cli", port: 2200),
            Invocation(host: "10.1.2.3"),
        ])

    static let negation = OpenSSHScenario(
        name: "negated patterns exclude a block",
        files: [
            configPath: """
            Host *.prod !bastion.prod
                User produser
                StrictHostKeyChecking yes
            Host !db* db-*
                Port 5022
            Host bastion.prod
                HostKeyAlias bastion-key
                GlobalKnownHostsFile /etc/ssh/prod_known_hosts
                IdentitiesOnly yes
                IdentityFile ~/.ssh/bastion
            Host web? !web3 *.lab
                UserKnownHostsFile ~/.ssh/lab_hosts
            """
        ],
        invocations: [
            Invocation(host: "api.prod"), Invocation(host: "bastion.prod"), Invocation(host: "db-1"),
            Invocation(host: "dbx"), Invocation(host: "web2"), Invocation(host: "web3"), Invocation(host: "x.lab"),
        ])

    static let includes = OpenSSHScenario(
        name: "Include with globs, nesting and quoted paths",
        files: [
            configPath: """
            Include conf.d/*.conf
            Include "{{HOME}}/my configs/extra.conf" missing.conf
            Host web1
                Include web1-extra
                Port 2201
            Host nomatch
                Include late.conf
            Host *
                User fallback
            """,
            ".ssh/conf.d/10-first.conf": """
            Host db1
                User dbadmin
                HostName 10.0.0.5
            """,
            ".ssh/conf.d/20-second.conf": """
            Host db1 web1
                User second
            Host db1
                Port 3022
            """,
            ".ssh/conf.d/ignored.txt": "Host *\n    User from-txt\n",
            ".ssh/web1-extra": """
            IdentityFile ~/.ssh/from_include
            Host other
                User not-web1
            """,
            ".ssh/late.conf": "Host *\n    ConnectTimeout 7\n",
            "my configs/extra.conf": "Host extra\n    HostName Extra.Internal\n",
        ],
        invocations: [
            Invocation(host: "db1"), Invocation(host: "web1"), Invocation(host: "other"), Invocation(host: "nomatch"),
            Invocation(host: "extra"),
        ])

    static let tokensAndQuotes = OpenSSHScenario(
        name: "percent tokens, tilde, environment and quoted paths",
        files: [
            configPath: """
            Host tok
                HostName Tok.Example.NET
                User "ops user"
                Port 2200
                IdentityFile "~/.ssh/keys dir/%h-%p-%r"
                IdentityFile %d/.ssh/%u@%n
                IdentityFile ${KEYDIR}/k_%h
                IdentityFile ~/.ssh/100%%
                UserKnownHostsFile "~/.ssh/known hosts" ~/.ssh/kh_%h_%p %d/kh2
                IdentityAgent ~/.ssh/agent-%r.sock
            Host escaped
                IdentityFile ~/.ssh/a\\ b
                UserKnownHostsFile=none
                IdentityAgent none
                StrictHostKeyChecking=no
            Host envagent
                IdentityAgent $MY_AGENT
                IdentityFile none
            Host *
                IdentitiesOnly=yes
            """
        ],
        invocations: [
            Invocation(host: "tok"), Invocation(host: "escaped"), Invocation(host: "envagent"),
            Invocation(host: "plain"),
        ],
        variables: ["KEYDIR": "/keys", "MY_AGENT": "/run/my-agent", "SSH_AUTH_SOCK": "/run/default-agent"])

    static let keywordSpellings = OpenSSHScenario(
        name: "keyword case, equals signs, comments and Match all",
        files: [
            configPath: """
            # a comment line
              HOSTNAME=global.example.com    # applies to every host
            host = alpha beta
              user=alpha-user
              PORT 2022
            HOST gamma
              ServerAliveInterval 2m30s
              ConnectTimeout none
            Match all
              ConnectTimeout 15
              StrictHostKeyChecking off
              serveralivecountmax = 9
            """
        ],
        invocations: [
            Invocation(host: "alpha"), Invocation(host: "beta"), Invocation(host: "gamma"), Invocation(host: "delta"),
        ])

    static let matchCriteria = OpenSSHScenario(
        name: "Match host, originalhost, user and localuser with negation and lists",
        files: [
            configPath: """
            IgnoreUnknown UseKeychain,Add*
            UseKeychain yes
            Match host web1
                ServerAliveInterval 5
            Host web1 web2
                HostName %h.Example.com
            Match host web1.example.com user deploy
                Port 2201
            Match originalhost WEB2 !user root
                Port 2202
            Match user root,admin
                IdentitiesOnly yes
            Match localuser *,!nobody-here
                ServerAliveCountMax 7
            Match !host *.example.com
                ConnectTimeout 9
            Match canonical all
                Port 1
            Host *
                User fallback
                AddKeysToAgentx yes
            """
        ],
        invocations: [
            Invocation(host: "deploy@web1"), Invocation(host: "web1"), Invocation(host: "web2"),
            Invocation(host: "root@web2"), Invocation(host: "other"), Invocation(host: "web1", user: "deploy"),
            Invocation(host: "admin@db-1"),
        ])

    static let finalPass = OpenSSHScenario(
        name: "Match final and canonical read the files again",
        files: [
            configPath: """
            Host alpha
                HostName Alpha.Example.NET
            Host alpha.example.net
                Port 2300
                User second-pass
            Match final host alpha.example.net
                IdentityFile ~/.ssh/final_%h
            Match canonical
                ServerAliveInterval 33
            Host Beta
                Port 2400
            Host beta
                User lower-case
            Match host nothing !final
                Port 1
            """
        ],
        invocations: [
            Invocation(host: "alpha"), Invocation(host: "Beta"), Invocation(host: "beta"), Invocation(host: "gamma"),
        ])

    static let proxies = OpenSSHScenario(
        name: "ProxyJump and ProxyCommand, first one wins",
        files: [
            configPath: """
            Host j1
                ProxyJump bastion
            Host j2
                ProxyCommand nc %h %p
            Host j3
                ProxyJump none
                ProxyJump bastion
            Host j4
                ProxyCommand none
            Host *
                ProxyJump late
                ProxyCommand never
            """
        ],
        invocations: [
            Invocation(host: "j1"), Invocation(host: "j2"), Invocation(host: "j3"), Invocation(host: "j4"),
            Invocation(host: "j5"),
        ])

    /// Configs `ssh` refuses; hostscope must refuse them too.
    static let rejected: [OpenSSHScenario] = [
        ("a bad port in a block that does not apply", "Host nomatch\n    Port abc\n"),
        ("two ports on one line", "Port 22 23\n"),
        ("an unknown token in HostName", "HostName %z.example.com\n"),
        ("none beside other known_hosts files", "UserKnownHostsFile ~/a none\n"),
        ("an unknown StrictHostKeyChecking value", "StrictHostKeyChecking maybe\n"),
        ("a time with an unknown unit", "ConnectTimeout 5x\n"),
        ("an unclosed quote", "IdentityFile \"~/.ssh/my key\n"),
        ("a file including itself", "Include config\n"),
        ("an empty Host pattern", "Host \"\"\n"),
        ("a misspelt keyword", "Host web1\n    Hostnme web1.example.com\n"),
        ("a keyword before the IgnoreUnknown that names it", "UseKeychain yes\nIgnoreUnknown UseKeychain\n"),
        ("IgnoreUnknown in a block that does not apply", "Host other\n  IgnoreUnknown Foo\nHost *\n  Foo bar\n"),
        ("Match all beside another criterion", "Match all host web1\n"),
        ("a Match criterion without its pattern", "Match host\n"),
        ("a misspelt Match criterion", "Match hots web1\n"),
    ].map { name, text in
        OpenSSHScenario(name: name, files: [configPath: text], invocations: [Invocation(host: "web1")])
    }
}
