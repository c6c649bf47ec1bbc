// swift-tools-version:6.0
import PackageDescription

// Resolve-cost comparison of WeaveDI with its peers, in one process. Run with `Scripts/bench`.
let package = Package(
    name: "WeaveBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "WeaveDI", path: ".."),
        .package(url: "https://github.com/Swinject/Swinject.git", exact: "2.10.0"),
        .package(url: "https://github.com/pointfreeco/swift-dependencies.git", exact: "1.17.1"),
    ],
    targets: [
        .executableTarget(
            name: "WeaveBenchmarks",
            dependencies: [
                .product(name: "WeaveDI", package: "WeaveDI"),
                .product(name: "WeavePrometheus", package: "WeaveDI"),
                .product(name: "Swinject", package: "Swinject"),
                .product(name: "Dependencies", package: "swift-dependencies"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
