// swift-tools-version:6.0
import CompilerPluginSupport
import PackageDescription

// A package of its own, not a target of the root package: only users of the macros resolve and
// build swift-syntax (minutes on a small machine); `WeaveDI` alone never does.
let package = Package(
    name: "WeaveMacros",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "WeaveMacros", targets: ["WeaveMacros"]),
    ],
    dependencies: [
        .package(name: "WeaveDI", path: "../.."),
        .package(url: "https://github.com/swiftlang/swift-syntax.git", from: "602.0.0"),
    ],
    targets: [
        // The compiler plugin: @Component's expansion and its diagnostics.
        .macro(
            name: "WeaveMacrosPlugin",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ]
        ),
        // The macros' declarations, which users import.
        .target(name: "WeaveMacros", dependencies: ["WeaveMacrosPlugin", .product(name: "WeaveDI", package: "WeaveDI")]),
        .testTarget(
            name: "WeaveMacrosTests",
            dependencies: [
                "WeaveMacros", "WeaveMacrosPlugin",
                .product(name: "SwiftSyntaxMacrosTestSupport", package: "swift-syntax"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
