// swift-tools-version: 6.1
import PackageDescription

/// Every target: imports are internal unless marked `public import`, and a file uses only the members
/// of modules it imports itself, so that each file's imports (and this manifest) say what it depends on.
let strictImports: [SwiftSetting] = [
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "hostscope",
    products: [
        .executable(name: "hostscope", targets: ["hostscope"]),
        // The domain modules, for the fuzzing package in Fuzz/ (which depends on this one by path).
        .library(
            name: "HostscopeParsers",
            targets: [
                "ValueFormats", "OrderedJSON", "HostStats", "SSHTransport", "RemoteFiles", "AgentTracing", "Chat",
                "HostscopeCore", "MetricsExposition", "ServeAPI",
            ]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // Only the HTTP face uses it; no default traits (swift-configuration is not needed).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // Only the MCP face uses it: the Model Context Protocol's types, server and stdio transport.
        .package(url: "https://github.com/modelcontextprotocol/swift-sdk", from: "0.12.1"),
        // FleetConfig and Alerting use it: the YAML of fleet and rules files, read with the line of every node.
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
    ],
    targets: [
        // C: system libraries, each wrapped by exactly one Swift module.
        .systemLibrary(
            name: "CLibSSH2", pkgConfig: "libssh2",
            providers: [.apt(["libssh2-1-dev"])]),
        .systemLibrary(
            name: "CCurl", pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(
            name: "CLibCrypto", pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]),
        .systemLibrary(
            name: "CZlib", pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]),
        // BSD editline, as OpenSSH's sftp uses it: the chat's line editor.
        .systemLibrary(
            name: "CLibEdit", pkgConfig: "libedit",
            providers: [.apt(["libedit-dev"])]),
        // Linux's epoll and eventfd, for the SSH engine's I/O threads.
        .systemLibrary(name: "CLinuxEvents"),

        // Leaves: value formats and JSON, used by every layer above.
        .target(name: "ValueFormats", swiftSettings: strictImports),
        .target(name: "OrderedJSON", dependencies: ["ValueFormats"], swiftSettings: strictImports),

        // Wrappers: the only users of their C library.
        .target(name: "Digests", dependencies: ["CLibCrypto", "ValueFormats"], swiftSettings: strictImports),
        .target(
            name: "SSHTransport",
            dependencies: [
                "CLibSSH2", "CLinuxEvents", "Digests", "ValueFormats",
                .product(name: "HeapModule", package: "swift-collections"),
            ],
            swiftSettings: strictImports),
        .target(name: "CurlHTTP", dependencies: ["CCurl", "ValueFormats"], swiftSettings: strictImports),
        .target(name: "Gzip", dependencies: ["CZlib"], swiftSettings: strictImports),
        // Only the command line uses it: lines typed on a terminal, edited, with history, completion and paste.
        .target(name: "LineEditing", dependencies: ["CLibEdit"], swiftSettings: strictImports),
        .target(
            name: "Storage",
            dependencies: ["OrderedJSON", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strictImports),

        // Domain: models, probes, pure parsers, state machines, encoders.
        .target(name: "HostStats", dependencies: ["OrderedJSON", "ValueFormats"], swiftSettings: strictImports),
        .target(
            name: "AgentTracing",
            dependencies: [
                "OrderedJSON", "CurlHTTP", "Gzip", "ValueFormats",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: strictImports),
        .target(
            name: "RemoteFiles",
            dependencies: [
                "SSHTransport", "Digests", "OrderedJSON", "ValueFormats",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "HeapModule", package: "swift-collections"),
            ],
            swiftSettings: strictImports),
        .target(
            name: "Chat", dependencies: ["OrderedJSON", "CurlHTTP", "AgentTracing", "ValueFormats"],
            swiftSettings: strictImports),
        // The fleet file: groups of hosts and patterns, labels, per-group settings and serve's own, read from YAML.
        .target(
            name: "FleetConfig", dependencies: ["ValueFormats", .product(name: "Yams", package: "Yams")],
            swiftSettings: strictImports),
        .target(
            name: "Alerting",
            dependencies: ["HostStats", "SSHTransport", "ValueFormats", .product(name: "Yams", package: "Yams")],
            swiftSettings: strictImports),

        // Core: one entry point per surface; owns the database, the trace runtime, HTTP clients, sessions.
        .target(
            name: "HostscopeCore",
            dependencies: [
                "OrderedJSON", "ValueFormats", "HostStats", "SSHTransport", "Storage", "AgentTracing", "RemoteFiles",
                "Chat", "CurlHTTP", "FleetConfig", "Alerting",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strictImports),
        // Prometheus and OpenMetrics exposition of snapshots (node_exporter's families and hostscope's own).
        .target(name: "MetricsExposition", dependencies: ["HostStats"], swiftSettings: strictImports),
        // The JSON API and live board of `serve`: requests, answers, the event log, no server library.
        .target(
            name: "ServeAPI",
            dependencies: [
                "HostscopeCore", "Gzip", "HostStats", "MetricsExposition", "OrderedJSON", "Storage", "ValueFormats",
            ],
            swiftSettings: strictImports),
        // The dashboard `serve` answers at `/`: its page and assets, compiled in (no file read at run time).
        .target(
            name: "HostscopeWeb", dependencies: ["Digests", "Gzip"],
            resources: [
                "index.html", "app.css", "app.js", "api.js", "dom.js", "format.js", "chart.js", "fleet.js", "host.js",
                "tracing.js", "files.js", "alerts.js", "icon.svg",
                "chat.js", "markdown.js",
            ].map { .embedInCode("Assets/" + $0) },
            swiftSettings: strictImports),
        // The HTTP face of `serve`: the only module that depends on the server library.
        .target(
            name: "HostscopeServer",
            dependencies: [
                "HostscopeWeb", "HostscopeCore", "HostscopeMCP", "AgentTracing", "HostStats", "MetricsExposition",
                "OrderedJSON", "RemoteFiles", "ServeAPI", "Storage", "ValueFormats", "Alerting", "Chat",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictImports),
        // The MCP face: hostscope's read-only host tools, resources and prompts for any MCP client.
        .target(
            name: "HostscopeMCP",
            dependencies: [
                "HostscopeCore", "AgentTracing", "HostStats", "OrderedJSON", "Storage", "ValueFormats", "Chat",
                .product(name: "MCP", package: "swift-sdk"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictImports),
        // Rendering: everything the command line shows on a terminal.
        .target(
            name: "TerminalUI",
            dependencies: [
                "HostscopeCore", "OrderedJSON", "ValueFormats", "HostStats", "RemoteFiles", "Storage", "AgentTracing",
                "Chat", "Alerting",
            ],
            swiftSettings: strictImports),
        // Faces.
        .executableTarget(
            name: "hostscope",
            dependencies: [
                "HostscopeCore", "TerminalUI", "OrderedJSON", "ValueFormats", "HostStats", "RemoteFiles", "Storage",
                "AgentTracing", "Chat", "HostscopeServer", "ServeAPI", "HostscopeMCP", "LineEditing", "FleetConfig",
                "Alerting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictImports),

        .testTarget(
            name: "FleetConfigTests", dependencies: ["FleetConfig", "TestSupport"], swiftSettings: strictImports),
        .testTarget(name: "OrderedJSONTests", dependencies: ["OrderedJSON"], swiftSettings: strictImports),
        .testTarget(
            name: "ValueFormatsTests", dependencies: ["ValueFormats", "TestSupport"], swiftSettings: strictImports),
        .testTarget(
            name: "HostStatsTests", dependencies: ["HostStats", "OrderedJSON", "TestSupport"],
            swiftSettings: strictImports),
        .testTarget(
            name: "SSHTransportTests", dependencies: ["SSHTransport", "Digests", "ValueFormats", "TestSupport"],
            swiftSettings: strictImports),
        .testTarget(name: "CurlHTTPTests", dependencies: ["CurlHTTP", "TestSupport"], swiftSettings: strictImports),
        .testTarget(name: "GzipTests", dependencies: ["Gzip"], swiftSettings: strictImports),
        .testTarget(
            name: "AlertingTests", dependencies: ["Alerting", "HostStats", "TestSupport"],
            swiftSettings: strictImports),
        .testTarget(
            name: "StorageTests",
            dependencies: [
                "Storage", "HostStats", "HostscopeCore", "AgentTracing", "OrderedJSON", "TestSupport", "ValueFormats",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strictImports),
        .testTarget(
            name: "ChatTests", dependencies: ["Chat", "OrderedJSON", "TestSupport", "CurlHTTP", "ValueFormats"],
            swiftSettings: strictImports),
        .testTarget(
            name: "AgentTracingTests",
            dependencies: [
                "AgentTracing", "CurlHTTP", "OrderedJSON", "TestSupport", "ValueFormats",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strictImports),
        .testTarget(
            name: "HostscopeCoreTests",
            dependencies: [
                "HostscopeCore", "AgentTracing", "Chat", "CurlHTTP", "HostStats", "OrderedJSON", "SSHTransport",
                "Storage", "ValueFormats", "TestSupport",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strictImports),
        .testTarget(
            name: "TerminalUITests",
            dependencies: [
                "TerminalUI", "HostscopeCore", "HostStats", "AgentTracing", "OrderedJSON", "TestSupport",
                "ValueFormats", "Alerting",
            ],
            swiftSettings: strictImports),
        .testTarget(
            name: "CLITests",
            dependencies: [
                "TestSupport", "OrderedJSON", "Storage", "HostStats", "HostscopeCore", "ValueFormats", "AgentTracing",
                "Alerting",
            ],
            swiftSettings: strictImports),
        .testTarget(
            name: "RemoteFilesTests",
            dependencies: ["RemoteFiles", "SSHTransport", "Digests", "TestSupport", "OrderedJSON", "ValueFormats"],
            swiftSettings: strictImports),
        .testTarget(
            name: "PropertyTests",
            dependencies: [
                "OrderedJSON", "HostStats", "AgentTracing", "ValueFormats",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strictImports),
        .testTarget(
            name: "MetricsExpositionTests", dependencies: ["MetricsExposition", "HostStats", "TestSupport"],
            swiftSettings: strictImports),
        .testTarget(
            name: "ServeAPITests",
            dependencies: [
                "ServeAPI", "Gzip", "HostscopeCore", "HostStats", "MetricsExposition", "OrderedJSON", "Storage",
                "TestSupport",
            ],
            swiftSettings: strictImports),
        .testTarget(
            name: "HostscopeWebTests", dependencies: ["HostscopeWeb", "Gzip", "TestSupport"],
            swiftSettings: strictImports),
        .testTarget(
            name: "HostscopeMCPTests",
            dependencies: [
                "HostscopeMCP", "HostscopeCore", "AgentTracing", "OrderedJSON", "TestSupport",
                .product(name: "MCP", package: "swift-sdk"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictImports),
        .testTarget(
            name: "HostscopeServerTests",
            dependencies: [
                "HostscopeServer", "HostscopeCore", "HostStats", "OrderedJSON", "ServeAPI", "TestSupport",
                "ValueFormats",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictImports),
        .target(
            name: "TestSupport", dependencies: ["ValueFormats"], path: "Tests/TestSupport", swiftSettings: strictImports
        ),
    ]
)
