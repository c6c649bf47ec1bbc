// swift-tools-version:6.1
import PackageDescription

// Benchmarks, run with `Scripts/bench`: the resolve cost of WeaveDI beside its peers and the
// instrumentation and /metrics figures, in one process (WeaveBenchmarks); and the same /metrics
// served by plain SwiftNIO (WeaveHealthServer) and by Hummingbird 2, to choose the HTTP stack.
let package = Package(
    name: "WeaveBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "WeaveDI", path: ".."),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/Swinject/Swinject.git", exact: "2.10.0"),
        .package(url: "https://github.com/pointfreeco/swift-dependencies.git", exact: "1.17.1"),
        .package(name: "WeaveDependencies", path: "../Integrations/WeaveDependencies"),
        // No default traits: they would add swift-configuration and all of Foundation.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", exact: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-protobuf.git", exact: "1.39.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.1.0"),
    ],
    targets: [
        .executableTarget(
            name: "WeaveBenchmarks",
            dependencies: [
                "MetricsFixture", "FixtureHealthSource", "ProtobufPeer",
                .product(name: "WeaveDI", package: "WeaveDI"),
                .product(name: "WeavePrometheus", package: "WeaveDI"),
                .product(name: "WeaveObservability", package: "WeaveDI"),
                .product(name: "WeaveHealthRoutes", package: "WeaveDI"),
                .product(name: "WeaveHealthServer", package: "WeaveDI"),
                .product(name: "WeaveAppEndpoint", package: "WeaveDI"),
                .product(name: "WeaveTracing", package: "WeaveDI"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Swinject", package: "Swinject"),
                .product(name: "Dependencies", package: "swift-dependencies"),
                .product(name: "WeaveDependencies", package: "WeaveDependencies"),
            ]
        ),
        // The protobuf exposition made with swift-protobuf (metrics.pb.swift, generated from
        // metrics.proto and committed), the peer of WeavePrometheus's hand-written encoder.
        .target(
            name: "ProtobufPeer",
            dependencies: [
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "WeavePrometheus", package: "WeaveDI"),
            ],
            exclude: ["metrics.proto"]
        ),
        // The scrape target every HTTP benchmark serves: 1,000 resolved services, as many checks.
        .target(
            name: "MetricsFixture",
            dependencies: [
                .product(name: "WeaveDI", package: "WeaveDI"),
                .product(name: "WeaveObservability", package: "WeaveDI"),
                .product(name: "WeavePrometheus", package: "WeaveDI"),
            ]
        ),
        .target(
            name: "FixtureHealthSource",
            dependencies: ["MetricsFixture", .product(name: "WeaveHealthRoutes", package: "WeaveDI")]
        ),
        .executableTarget(
            name: "NIOMetricsServer",
            dependencies: [
                "MetricsFixture", "FixtureHealthSource",
                .product(name: "WeaveHealthRoutes", package: "WeaveDI"),
                .product(name: "WeaveHealthServer", package: "WeaveDI"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "HummingbirdMetricsServer",
            dependencies: [
                "MetricsFixture",
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
