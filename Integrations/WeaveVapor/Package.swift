// swift-tools-version:6.0
import PackageDescription

// A package of its own, not a target of the root package: only users of Vapor resolve and build
// Vapor (see the README, "Observe your own service").
let package = Package(
    name: "WeaveVapor",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "WeaveVapor", targets: ["WeaveVapor"]),
    ],
    dependencies: [
        .package(name: "WeaveDI", path: "../.."),
        .package(url: "https://github.com/vapor/vapor.git", from: "4.122.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        .target(
            name: "WeaveVapor",
            dependencies: [
                .product(name: "WeaveAppEndpoint", package: "WeaveDI"),
                .product(name: "Vapor", package: "vapor"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "WeaveVaporTests",
            dependencies: [
                "WeaveVapor",
                .product(name: "WeaveAppEndpoint", package: "WeaveDI"),
                .product(name: "VaporTesting", package: "vapor"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
