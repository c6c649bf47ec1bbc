// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "WeaveDI",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "WeaveDI", targets: ["WeaveDI"]),
        .library(name: "WeavePrometheus", targets: ["WeavePrometheus"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
    ],
    targets: [
        .target(
            name: "WeaveDI",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        .target(name: "WeavePrometheus", dependencies: ["WeaveDI"]),
        .testTarget(name: "WeavePrometheusTests", dependencies: ["WeavePrometheus"]),
        .testTarget(name: "WeaveDITests", dependencies: [
            "WeaveDI",
            .product(name: "MetricsTestKit", package: "swift-metrics"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
