// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "WeaveDI",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "WeaveDI", targets: ["WeaveDI"]),
        .library(name: "WeaveHealth", targets: ["WeaveHealth"]),
        .library(name: "WeavePrometheus", targets: ["WeavePrometheus"]),
        .library(name: "WeaveHealthServer", targets: ["WeaveHealthServer"]),
        .library(name: "WeaveSystemd", targets: ["WeaveSystemd"]),
        .library(name: "WeaveAppEndpoint", targets: ["WeaveAppEndpoint"]),
        .executable(name: "weave-healthd", targets: ["weave-healthd"]),
        .executable(name: "weave-health", targets: ["weave-health"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        // Package-internal (no product): the helpers every module needs, written once. No dependencies,
        // so the probe can use it and still link neither Foundation nor NIO.
        .target(name: "WeaveSupport", dependencies: ["CMachine"]),
        // What Swift cannot say: the futex system call, the CPU's cycle counter and glibc's malloc tuning (C, no dependencies).
        .target(name: "CMachine"),
        .target(
            name: "WeaveDI",
            dependencies: [
                "CMachine", "WeaveSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        // HealthCheckable services, their statuses and the monitor that runs them.
        .target(name: "WeaveHealth", dependencies: ["WeaveDI", "WeaveSupport", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "WeaveHealthTests", dependencies: ["WeaveHealth"]),
        .target(name: "WeavePrometheus", dependencies: ["WeaveDI", "WeaveHealth", "WeaveSupport"]),
        .testTarget(name: "WeavePrometheusTests", dependencies: ["WeavePrometheus", "WeaveTestSupport"]),
        .target(
            name: "WeaveHealthServer",
            dependencies: [
                "WeaveDI", "WeaveHealth", "WeavePrometheus", "WeaveSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(name: "WeaveHealthServerTests", dependencies: ["WeaveHealthServer", .product(name: "NIOCore", package: "swift-nio")]),
        // What an application adds to be seen by weave-healthd: its container and health served on a
        // discoverable Unix socket, as one swift-service-lifecycle Service.
        .target(
            name: "WeaveAppEndpoint",
            dependencies: [
                "WeaveDI", "WeaveHealth", "WeavePrometheus", "WeaveHealthServer", "WeaveSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(name: "WeaveAppEndpointTests", dependencies: [
            "WeaveAppEndpoint", "WeaveTestSupport", .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // libsystemd (Debian libsystemd-dev), called directly: journald, sd_notify, socket activation.
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        // One HTTPS request over Debian's OpenSSL, for the http check's https:// URLs: built with
        // libssl-dev's headers, libssl.so.3 loaded on the first request (dlopen), not linked.
        .target(name: "CTLS"),
        .target(
            name: "WeaveSystemd",
            dependencies: ["CSystemd", "WeaveSupport", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(name: "WeaveSystemdTests", dependencies: ["WeaveSystemd"]),
        .testTarget(name: "WeaveHealthdTests", dependencies: [
            "weave-healthd", "WeaveDI", "WeaveHealth", "WeaveHealthServer", "WeaveAppEndpoint", "WeaveTestSupport",
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        .executableTarget(
            name: "weave-healthd",
            dependencies: [
                "CMachine", "CTLS", "WeaveDI", "WeaveHealth", "WeavePrometheus", "WeaveHealthServer", "WeaveSupport", "WeaveSystemd",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // The probe: plain sockets, no Foundation and no NIO (only the package's own helpers), so it starts fast.
        .executableTarget(name: "weave-health", dependencies: ["WeaveSupport"]),
        .testTarget(name: "WeaveHealthProbeTests", dependencies: ["weave-health", "WeaveTestSupport"], exclude: ["Fixtures"]),
        .testTarget(name: "WeaveDITests", dependencies: [
            "WeaveDI",
            .product(name: "MetricsTestKit", package: "swift-metrics"),
        ]),
        // What the test targets share: long synchronous work on a thread of its own.
        .target(name: "WeaveTestSupport", path: "Tests/WeaveTestSupport"),
        // Upstream WeaveDI's documented patterns in the Swift 5 language mode its documentation uses.
        .testTarget(name: "WeaveDISwift5Tests", dependencies: ["WeaveDI"], swiftSettings: [.swiftLanguageMode(.v5)]),
    ],
    swiftLanguageModes: [.v6]
)
