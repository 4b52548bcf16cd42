// swift-tools-version: 6.1
import PackageDescription

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
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // Only the HTTP face uses it; no default traits (swift-configuration is not needed).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        // C libraries, each wrapped by exactly one Swift module.
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

        // Leaf modules.
        .target(name: "OrderedJSON"),
        .target(name: "Digests", dependencies: ["CLibCrypto"]),
        .target(name: "Gzip", dependencies: ["CZlib"]),
        .target(name: "HostStats", dependencies: ["OrderedJSON"]),
        .target(
            name: "SSHTransport",
            dependencies: [
                "CLibSSH2", "CLinuxEvents", "Digests", .product(name: "HeapModule", package: "swift-collections"),
            ]),
        .target(name: "CurlHTTP", dependencies: ["CCurl"]),
        .target(
            name: "Storage",
            dependencies: ["HostStats", "OrderedJSON", .product(name: "GRDB", package: "GRDB.swift")]),
        .target(
            name: "AgentTracing",
            dependencies: [
                "OrderedJSON", "CurlHTTP", "Gzip",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]),
        .target(
            name: "RemoteFiles",
            dependencies: [
                "SSHTransport", "Digests", "OrderedJSON",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]),
        .target(
            name: "Chat",
            dependencies: ["OrderedJSON", "CurlHTTP", "AgentTracing"]),

        // Composition root and the command line.
        .target(
            name: "Agent",
            dependencies: [
                "OrderedJSON", "HostStats", "SSHTransport", "Storage", "AgentTracing", "RemoteFiles", "Chat",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]),
        // Prometheus and OpenMetrics exposition of snapshots, and the JSON API's pure parts.
        .target(name: "MetricsExposition", dependencies: ["HostStats"]),
        .target(
            name: "ServeAPI",
            dependencies: ["Agent", "AgentTracing", "HostStats", "MetricsExposition", "OrderedJSON", "Storage"]),
        // The HTTP face of `serve`: the only module that depends on the server library.
        .target(
            name: "HostscopeServer",
            dependencies: [
                "Agent", "AgentTracing", "HostStats", "MetricsExposition", "OrderedJSON", "ServeAPI", "Storage",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .executableTarget(
            name: "hostscope",
            dependencies: [
                "Agent", "AgentTracing", "OrderedJSON", "HostStats", "RemoteFiles", "Storage", "HostscopeServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),

        .testTarget(name: "OrderedJSONTests", dependencies: ["OrderedJSON"]),
        .testTarget(
            name: "HostStatsTests", dependencies: ["HostStats", "OrderedJSON", "TestSupport"]),
        .testTarget(name: "SSHTransportTests", dependencies: ["SSHTransport", "Digests", "TestSupport"]),
        .testTarget(name: "CurlHTTPTests", dependencies: ["CurlHTTP", "TestSupport"]),
        .testTarget(name: "GzipTests", dependencies: ["Gzip", "TestSupport"]),
        .testTarget(
            name: "StorageTests",
            dependencies: ["Storage", "HostStats", "OrderedJSON", .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(name: "ChatTests", dependencies: ["Chat", "OrderedJSON", "TestSupport", "CurlHTTP"]),
        .testTarget(
            name: "AgentTracingTests",
            dependencies: [
                "AgentTracing", "CurlHTTP", "Gzip", "OrderedJSON", "TestSupport",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]),
        .testTarget(
            name: "AgentTests",
            dependencies: [
                "Agent", "AgentTracing", "Chat", "CurlHTTP", "HostStats", "OrderedJSON", "SSHTransport", "Storage",
                "TestSupport",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]),
        .testTarget(name: "CLITests", dependencies: ["TestSupport", "OrderedJSON", "Storage", "HostStats"]),
        .testTarget(
            name: "RemoteFilesTests",
            dependencies: ["RemoteFiles", "SSHTransport", "Digests", "TestSupport", "OrderedJSON"]),
        .testTarget(name: "MetricsExpositionTests", dependencies: ["MetricsExposition", "HostStats", "TestSupport"]),
        .testTarget(
            name: "ServeAPITests",
            dependencies: ["ServeAPI", "Agent", "HostStats", "MetricsExposition", "OrderedJSON", "Storage", "TestSupport"]),
        .testTarget(
            name: "HostscopeServerTests",
            dependencies: [
                "HostscopeServer", "Agent", "HostStats", "MetricsExposition", "OrderedJSON", "ServeAPI", "Storage",
                "TestSupport",
            ]),
        .target(name: "TestSupport", path: "Tests/TestSupport"),
    ]
)
