// swift-tools-version:6.1
import PackageDescription

// A small Hummingbird 2 service that uses WeaveDI and is observed by weave-healthd: `Scripts/demo`
// builds and runs it beside the daemon.
let package = Package(
    name: "Orders",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "WeaveDI", path: "../..", traits: ["Hummingbird"]),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
    ],
    targets: [
        .executableTarget(
            name: "Orders",
            dependencies: [
                .product(name: "WeaveDI", package: "WeaveDI"),
                .product(name: "WeaveAppEndpoint", package: "WeaveDI"),
                .product(name: "WeaveSystemd", package: "WeaveDI"),
                .product(name: "WeaveHummingbird", package: "WeaveDI"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
