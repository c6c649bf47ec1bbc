// swift-tools-version:6.0
import PackageDescription

// A package of its own, not a target of the root package: only users of Hummingbird resolve and
// build Hummingbird (see the README, "Observe your own service").
let package = Package(
    name: "WeaveHummingbird",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "WeaveHummingbird", targets: ["WeaveHummingbird"]),
    ],
    dependencies: [
        .package(name: "WeaveDI", path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
    ],
    targets: [
        .target(
            name: "WeaveHummingbird",
            dependencies: [
                .product(name: "WeaveHealthRoutes", package: "WeaveDI"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        .testTarget(
            name: "WeaveHummingbirdTests",
            dependencies: [
                "WeaveHummingbird",
                .product(name: "WeaveAppEndpoint", package: "WeaveDI"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
