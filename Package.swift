// swift-tools-version: 6.0
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
        .executable(name: "hostscope", targets: ["hostscope"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
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

        // Core: one entry point per surface; owns the database, the trace runtime, HTTP clients, sessions.
        .target(
            name: "HostscopeCore",
            dependencies: [
                "OrderedJSON", "ValueFormats", "HostStats", "SSHTransport", "Storage", "AgentTracing", "RemoteFiles",
                "Chat", "CurlHTTP", .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strictImports),
        // Rendering: everything the command line shows on a terminal.
        .target(
            name: "TerminalUI",
            dependencies: [
                "HostscopeCore", "OrderedJSON", "ValueFormats", "HostStats", "RemoteFiles", "Storage", "AgentTracing",
                "Chat",
            ],
            swiftSettings: strictImports),
        // Faces.
        .executableTarget(
            name: "hostscope",
            dependencies: [
                "HostscopeCore", "TerminalUI", "OrderedJSON", "ValueFormats", "HostStats", "RemoteFiles", "Storage",
                "AgentTracing", "Chat", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictImports),

        .testTarget(name: "OrderedJSONTests", dependencies: ["OrderedJSON"], swiftSettings: strictImports),
        .testTarget(name: "ValueFormatsTests", dependencies: ["ValueFormats"], swiftSettings: strictImports),
        .testTarget(
            name: "HostStatsTests", dependencies: ["HostStats", "OrderedJSON", "TestSupport"],
            swiftSettings: strictImports),
        .testTarget(
            name: "SSHTransportTests", dependencies: ["SSHTransport", "Digests", "ValueFormats", "TestSupport"],
            swiftSettings: strictImports),
        .testTarget(name: "CurlHTTPTests", dependencies: ["CurlHTTP", "TestSupport"], swiftSettings: strictImports),
        .testTarget(name: "GzipTests", dependencies: ["Gzip"], swiftSettings: strictImports),
        .testTarget(
            name: "StorageTests",
            dependencies: [
                "Storage", "HostStats", "HostscopeCore", "OrderedJSON", .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strictImports),
        .testTarget(
            name: "ChatTests", dependencies: ["Chat", "OrderedJSON", "TestSupport", "CurlHTTP"],
            swiftSettings: strictImports),
        .testTarget(
            name: "AgentTracingTests",
            dependencies: [
                "AgentTracing", "CurlHTTP", "OrderedJSON", "TestSupport",
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
            dependencies: ["TerminalUI", "HostscopeCore", "HostStats", "OrderedJSON", "TestSupport", "ValueFormats"],
            swiftSettings: strictImports),
        .testTarget(
            name: "CLITests",
            dependencies: ["TestSupport", "OrderedJSON", "Storage", "HostStats", "HostscopeCore", "ValueFormats"],
            swiftSettings: strictImports),
        .testTarget(
            name: "RemoteFilesTests",
            dependencies: ["RemoteFiles", "SSHTransport", "Digests", "TestSupport", "OrderedJSON", "ValueFormats"],
            swiftSettings: strictImports),
        .target(name: "TestSupport", path: "Tests/TestSupport", swiftSettings: strictImports),
    ]
)
