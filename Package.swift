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
        .library(name: "DBus", targets: ["DBus"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),
        .target(
            name: "DBus",
            dependencies: ["CDBus"],
            swiftSettings: strict
        ),
        .target(
            name: "BusTestSupport",
            dependencies: ["DBus"],
            path: "Tests/BusTestSupport",
            swiftSettings: strict
        ),
        .testTarget(
            name: "DBusTests",
            dependencies: ["DBus", "BusTestSupport"],
            swiftSettings: strict
        ),
        .target(
            name: "PreferencesModel",
            swiftSettings: strict
        ),
        .testTarget(
            name: "PreferencesModelTests",
            dependencies: ["PreferencesModel"],
            swiftSettings: strict
        ),
    ]
)
