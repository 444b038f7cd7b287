// swift-tools-version:6.1
import PackageDescription

/// Every target builds in the Swift 6 language mode (complete strict concurrency) with
/// existential `any` spelled out, as swift-log does.
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "prefsd",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "PreferencesModel", targets: ["PreferencesModel"]),
        .library(name: "PreferencesStore", targets: ["PreferencesStore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        .target(
            name: "PreferencesModel",
            swiftSettings: strict
        ),
        .testTarget(
            name: "PreferencesModelTests",
            dependencies: ["PreferencesModel"],
            swiftSettings: strict
        ),
        .target(
            name: "PreferencesStore",
            dependencies: [
                "PreferencesModel",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "PreferencesStoreTests",
            dependencies: [
                "PreferencesStore",
                "PreferencesModel",
                // To read the database from a fresh connection, and to capture log messages.
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
    ]
)
