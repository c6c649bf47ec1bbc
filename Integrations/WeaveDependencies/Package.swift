// swift-tools-version:6.0
import PackageDescription

// A package of its own, not a target of the root package: only users of swift-dependencies (or The
// Composable Architecture) resolve and build it; `WeaveDI` alone never does.
let package = Package(
    name: "WeaveDependencies",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "WeaveDependencies", targets: ["WeaveDependencies"]),
    ],
    dependencies: [
        .package(name: "WeaveDI", path: "../.."),
        .package(url: "https://github.com/pointfreeco/swift-dependencies.git", from: "1.17.1"),
    ],
    targets: [
        .target(
            name: "WeaveDependencies",
            dependencies: [
                .product(name: "WeaveDI", package: "WeaveDI"),
                .product(name: "Dependencies", package: "swift-dependencies"),
            ]
        ),
        // Swift 5 mode: the language mode of upstream WeaveDI's swift-dependencies documentation.
        .testTarget(
            name: "WeaveDependenciesTests",
            dependencies: ["WeaveDependencies"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
    ],
    swiftLanguageModes: [.v6]
)
