// swift-tools-version:6.1
import PackageDescription

// Linux only (built and tested on Debian 12 with glibc): no `platforms:` are declared, since no Apple
// platform builds; WeaveSupport and CMachine stop a build elsewhere with a message that says so.
let package = Package(
    name: "WeaveDI",
    products: [
        .library(name: "WeaveDI", targets: ["WeaveDI"]),
        .library(name: "WeaveHealth", targets: ["WeaveHealth"]),
        .library(name: "WeavePrometheus", targets: ["WeavePrometheus"]),
        .library(name: "WeaveObservability", targets: ["WeaveObservability"]),
        .library(name: "WeaveTracing", targets: ["WeaveTracing"]),
        .library(name: "WeaveMemoryPressure", targets: ["WeaveMemoryPressure"]),
        .library(name: "WeaveHealthRoutes", targets: ["WeaveHealthRoutes"]),
        .library(name: "WeaveHealthServer", targets: ["WeaveHealthServer"]),
        .library(name: "WeaveSystemd", targets: ["WeaveSystemd"]),
        .library(name: "WeaveAppEndpoint", targets: ["WeaveAppEndpoint"]),
        .library(name: "WeaveHummingbird", targets: ["WeaveHummingbird"]),
        .library(name: "WeaveVapor", targets: ["WeaveVapor"]),
        .executable(name: "weave-healthd", targets: ["weave-healthd"]),
        .executable(name: "weave-health", targets: ["weave-health"]),
    ],
    // The framework adapters are built only for a package that asks for them, so that only users of
    // Hummingbird resolve and build Hummingbird, and only users of Vapor, Vapor:
    // `.package(url: …, from: "0.2.0", traits: ["Hummingbird"])`.
    traits: [
        .trait(name: "Hummingbird", description: "WeaveHummingbird: the endpoints in a Hummingbird 2 router."),
        .trait(name: "Vapor", description: "WeaveVapor: the endpoint in a Vapor 4 application's lifecycle and routes."),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        .package(url: "https://github.com/vapor/vapor.git", from: "4.122.0"),
    ],
    targets: [
        // Package-internal (no product): what every module needs, written once: locks, clocks, event
        // IDs, sockets, JSON. Only swift-log (no Foundation, no NIO), so the probe can use it.
        .target(name: "WeaveSupport", dependencies: ["CMachine", .product(name: "Logging", package: "swift-log")]),
        // What Swift cannot say: the futex system call, the CPU's cycle counter, a thread-local slot
        // and glibc's malloc tuning (C, Linux, no dependencies).
        .target(name: "CMachine"),
        // The container and its statistics.
        .target(name: "WeaveDI", dependencies: ["CMachine", "WeaveSupport", .product(name: "Logging", package: "swift-log")]),
        // HealthCheckable services, their statuses and the monitor that runs them.
        .target(name: "WeaveHealth", dependencies: ["WeaveSupport", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "WeaveHealthTests", dependencies: ["WeaveHealth", "WeaveObservability", "WeaveTestSupport"]),
        // The Prometheus model, its renderer and its parser.
        .target(name: "WeavePrometheus", dependencies: ["WeaveSupport"]),
        .testTarget(name: "WeavePrometheusTests", dependencies: ["WeavePrometheus", "WeaveTestSupport"]),
        // The HTTP endpoints as plain values: the route table, the router, the request and response
        // types, the status page. No server: any server embeds the router (ours, Hummingbird, Vapor).
        .target(
            name: "WeaveHealthRoutes",
            dependencies: [
                "WeaveHealth", "WeavePrometheus", "WeaveSupport", .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .testTarget(name: "WeaveHealthRoutesTests", dependencies: [
            "WeaveHealthRoutes", "WeaveObservability", "WeaveAppEndpoint", "WeaveTestSupport",
        ]),
        // Joins them: a container's metrics, checks, events and summary, health metrics, the
        // swift-metrics bridge; no HTTP and no NIO. `import WeaveObservability` alone gives what the
        // seed's `import WeaveDI` gave.
        .target(
            name: "WeaveObservability",
            dependencies: [
                "WeaveDI", "WeaveHealth", "WeavePrometheus", "WeaveSupport",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "WeaveObservabilityTests", dependencies: [
            "WeaveObservability", .product(name: "MetricsTestKit", package: "swift-metrics"),
        ]),
        // swift-distributed-tracing spans for a container's factory runs, under the request's span.
        .target(name: "WeaveTracing", dependencies: ["WeaveDI", .product(name: "Tracing", package: "swift-distributed-tracing")]),
        .testTarget(name: "WeaveTracingTests", dependencies: [
            "WeaveTracing", "WeaveTestSupport", .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
        ]),
        // Linux memory pressure (PSI, systemd's MEMORY_PRESSURE_WATCH): calls the `relieve` closure
        // it is given (a container's `relieveMemoryPressure()`); it knows no container.
        .target(name: "WeaveMemoryPressure", dependencies: [
            "WeaveSupport", .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        .testTarget(name: "WeaveMemoryPressureTests", dependencies: ["WeaveMemoryPressure", "WeaveDI", "WeaveTestSupport"]),
        // The SwiftNIO server of a `HealthRouter`: listeners, connection limits and deadlines.
        .target(
            name: "WeaveHealthServer",
            dependencies: [
                "WeaveHealthRoutes", "WeaveSupport",
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
        // A container's own routes (`/dependencies`, `/events`) for a `HealthRouter`: what an
        // application's endpoint and the daemon both serve, without the endpoint's server and tracing.
        .target(
            name: "WeaveContainerRoutes",
            dependencies: ["WeaveDI", "WeaveHealthRoutes", "WeaveObservability", "WeavePrometheus", "WeaveSupport"]
        ),
        // What an application adds to be seen by weave-healthd: its container and health served on a
        // discoverable Unix socket, as one swift-service-lifecycle Service.
        .target(
            name: "WeaveAppEndpoint",
            dependencies: [
                "WeaveContainerRoutes", "WeaveDI", "WeaveHealth", "WeaveHealthRoutes", "WeaveHealthServer", "WeaveMemoryPressure",
                "WeaveObservability", "WeavePrometheus", "WeaveSupport", "WeaveTracing",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(name: "WeaveAppEndpointTests", dependencies: [
            "WeaveAppEndpoint", "WeaveTestSupport", .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // The Hummingbird 2 adapter (trait Hummingbird): an AppEndpoint's routes in a Hummingbird router.
        .target(name: "WeaveHummingbird", dependencies: [
            "WeaveHealthRoutes", .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Hummingbird"])),
        ]),
        .testTarget(name: "WeaveHummingbirdTests", dependencies: [
            "WeaveHummingbird", "WeaveAppEndpoint", "WeaveTracing",
            .product(name: "HummingbirdTesting", package: "hummingbird", condition: .when(traits: ["Hummingbird"])),
            .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
        ]),
        // The Vapor 4 adapter (trait Vapor): an AppEndpoint in a Vapor application's lifecycle and routes.
        .target(name: "WeaveVapor", dependencies: [
            "WeaveAppEndpoint",
            .product(name: "Vapor", package: "vapor", condition: .when(traits: ["Vapor"])),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        .testTarget(name: "WeaveVaporTests", dependencies: [
            "WeaveVapor", "WeaveAppEndpoint", "WeaveTestSupport",
            .product(name: "VaporTesting", package: "vapor", condition: .when(traits: ["Vapor"])),
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
            "WeaveHealthd", "WeaveDI", "WeaveHealth", "WeaveHealthRoutes", "WeaveAppEndpoint", "WeaveMemoryPressure", "WeaveObservability",
            "WeaveTestSupport",
            .product(name: "NIOCore", package: "swift-nio"), .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // The daemon, as a library its tests link: configuration, checks, applications, collectors,
        // the services it runs and `Daemon.run`, which composes them. Package-internal (no product).
        .target(
            name: "WeaveHealthd",
            dependencies: [
                "CMachine", "CTLS", "WeaveContainerRoutes", "WeaveDI", "WeaveHealth", "WeaveHealthRoutes", "WeaveHealthServer", "WeaveMemoryPressure", "WeaveObservability",
                "WeavePrometheus", "WeaveReaders", "WeaveSupport", "WeaveSystemd",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // What the two programs read and applications never do: YAML files and HTTP replies. Apart
        // from WeaveSupport, which every application compiles; no NIO.
        .target(name: "WeaveReaders", dependencies: ["WeaveSupport"]),
        // weave-healthd: `main.swift`, which runs `Daemon.run`.
        .executableTarget(name: "weave-healthd", dependencies: ["WeaveHealthd"]),
        // The probe: plain sockets, no Foundation and no NIO, so it starts fast. It reads answers with
        // the daemon's own parser and health states.
        .executableTarget(name: "weave-health", dependencies: ["WeaveHealth", "WeavePrometheus", "WeaveReaders", "WeaveSupport"]),
        .testTarget(name: "WeaveHealthProbeTests", dependencies: ["weave-health", "WeaveHealth", "WeavePrometheus", "WeaveReaders", "WeaveTestSupport"], exclude: ["Fixtures"]),
        .testTarget(name: "WeaveDITests", dependencies: ["WeaveDI", "WeaveTestSupport"]),
        // What the test targets share: long synchronous work on a thread of its own, a clock the test
        // moves, waiting for a condition without a deadline.
        .target(name: "WeaveTestSupport", dependencies: [.product(name: "Logging", package: "swift-log")], path: "Tests/WeaveTestSupport"),
        // Upstream WeaveDI's documented patterns in the Swift 5 language mode its documentation uses.
        .testTarget(name: "WeaveDISwift5Tests", dependencies: ["WeaveDI"], swiftSettings: [.swiftLanguageMode(.v5)]),
    ],
    swiftLanguageModes: [.v6]
)

// Each file imports what it uses, and `public import` marks what a module's API shows of another
// (as Hummingbird does): every Swift target, sources and tests.
for target in package.targets where target.type != .system && !["CMachine", "CTLS"].contains(target.name) {
    target.swiftSettings = (target.swiftSettings ?? []) + [
        .enableUpcomingFeature("MemberImportVisibility"), .enableUpcomingFeature("InternalImportsByDefault"),
    ]
}
