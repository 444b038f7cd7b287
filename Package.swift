// swift-tools-version:6.1
import PackageDescription

/// Every Swift target builds in the Swift 6 language mode (complete strict concurrency)
/// with existential `any` spelled out, as swift-log does.
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

/// The linker script that moves the read-only data out of the writable `.rodata` section
/// the Swift objects make (the script says why).
let readOnlyDataScript = Context.packageDirectory + "/Sources/prefsd/read-only-data.ld"

/// How prefsd and the benchmark's Swift floor are linked: the Swift runtime and Foundation
/// linked in, by lld with packed relative relocations (DT_RELR, read by glibc 2.36 and
/// later), whose 84,000 relocations take 16 KiB of the file instead of 2 MiB that every
/// start reads, and every symbol bound at start (`-z now`), so that no call after the start
/// runs the dynamic linker's lookups again (docs/benchmarks.md, "prefsd's memory"). None of
/// its own symbols is exported (the static runtime's link arguments ask for
/// `-export-dynamic`): no library looks them up, and their table was 0.8 MB of the file.
/// Its read-only data lies in a read-only segment (`readOnlyDataScript`), whose pages it
/// can give back once it has used them.
let serviceLinking: [LinkerSetting] = [
    .unsafeFlags([
        "-static-stdlib", "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "-z", "-Xlinker", "now",
        "-Xlinker", "--no-export-dynamic", "-Xlinker", readOnlyDataScript,
    ]),
    .linkedLibrary("CoreFoundation"), .linkedLibrary("_FoundationCollections"),
    .linkedLibrary("_FoundationCShims"), .linkedLibrary("_FoundationICU"), .linkedLibrary("swiftSynchronization"),
]

/// The order in which the linker lays out prefsd's functions: those that a Ping, a Read and
/// a durable Write run, side by side (`scripts/symbol-order` writes it; docs/benchmarks.md,
/// "Where a call's code lies").
let prefsdSymbolOrder = Context.packageDirectory + "/Sources/prefsd/symbol-order.txt"

let package = Package(
    name: "prefsd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "prefsd", targets: ["prefsd"]),
        .executable(name: "prefs", targets: ["prefs"]),
        .executable(name: "prefs-settings", targets: ["prefs-settings"]),
        .executable(name: "prefsd-portal", targets: ["prefsd-portal"]),
        .library(name: "Preferences", targets: ["Preferences"]),
        .library(name: "DBus", targets: ["DBus"]),
        .library(name: "PreferencesModel", targets: ["PreferencesModel"]),
        .library(name: "PreferencesProxy", targets: ["PreferencesProxy"]),
        .library(name: "PreferencesClient", targets: ["PreferencesClient"]),
        .library(name: "SettingsBundle", targets: ["SettingsBundle"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        // `make docs`: the generate-documentation command plugin (nothing of it is linked).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // MARK: The bus
        .systemLibrary(
            name: "CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),
        // Additions to the standard library's types that several modules need: a Duration in
        // Dispatch's units, a string's UTF-8 bytes compared as bytes.
        .target(
            name: "StandardExtras",
            swiftSettings: strict
        ),
        .target(
            name: "DBus",
            dependencies: ["CDBus", "StandardExtras"],
            swiftSettings: strict
        ),

        // ICU's data for Foundation, English and the root locale only, without collation
        // (scripts/icu-data writes it from the toolchain's), in place of all of ICU's (34 MB)
        // wherever the Swift runtime is linked in: prefsd, and prefs and prefsd-portal as the
        // packages build them. The Settings app shows dates in the user's language: not there.
        // Its one source, icu-data.S, includes the file with `.incbin`, found through the
        // include path: the data folder is the target's public headers folder.
        .target(
            name: "SmallICUData",
            publicHeadersPath: "data"
        ),

        // MARK: Preferences
        .target(
            name: "PreferencesModel",
            dependencies: ["StandardExtras"],
            swiftSettings: strict
        ),
        // prefsd's names on the bus and what its error answers mean, in the Embedded Swift
        // subset: the GIO module builds the same sources (scripts/build-gio-module).
        .target(
            name: "PreferencesInterface",
            swiftSettings: strict
        ),
        // Files at paths someone else may control: read only when regular, never followed
        // through a link where it matters, written whole beside the file they replace.
        .target(
            name: "RegularFiles",
            swiftSettings: strict
        ),
        .target(
            name: "PreferencesProtocol",
            dependencies: ["DBus", "PreferencesInterface", "PreferencesModel", "RegularFiles"],
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
        // Roaming: the hybrid logical clock, the machines' files and the merge, without I/O
        // beyond the folder's files (no bus, no store): wired to both by the service.
        .target(
            name: "PreferencesRoaming",
            dependencies: ["PreferencesModel", "RegularFiles"],
            swiftSettings: strict
        ),
        .target(
            name: "PreferencesService",
            dependencies: [
                "DBus",
                "Dconf",
                "DconfFormats",
                "GSettingsPaths",
                "GSettingsSchemas",
                "GSettingsSnapshots",
                "GVariantCoding",
                "PreferencesModel",
                "PreferencesProtocol",
                "PreferencesRoaming",
                "PreferencesStore",
                "RegularFiles",
                "StandardExtras",
                "Xfconf",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict,
            plugins: ["EmbedIntrospection"]
        ),

        // The client engine: one domain cache and the protocol's policy, in the Embedded
        // Swift subset (no Foundation; its one dependency in the same subset) so that the
        // GIO module builds the same sources.
        .target(
            name: "PreferencesClient",
            dependencies: ["PreferencesInterface"],
            swiftSettings: strict
        ),
        .target(
            name: "PreferencesProxy",
            dependencies: ["DBus", "PreferencesModel", "PreferencesProtocol"],
            swiftSettings: strict
        ),
        // The engine driven over the proxy: what every caching client of the bus uses.
        .target(
            name: "ClientDriver",
            dependencies: ["PreferencesClient", "PreferencesModel", "PreferencesProxy", "StandardExtras"],
            swiftSettings: strict
        ),
        .target(
            name: "Preferences",
            dependencies: ["ClientDriver", "PreferencesClient", "PreferencesModel", "PreferencesProtocol", "PreferencesProxy", "SettingsBundle"],
            swiftSettings: strict
        ),

        // MARK: Settings bundles and the Settings app
        .target(
            name: "SettingsBundle",
            dependencies: ["PreferencesModel"],
            swiftSettings: strict
        ),
        .systemLibrary(
            name: "CGtk",
            pkgConfig: "libadwaita-1",
            providers: [.apt(["libadwaita-1-dev", "libgtk-4-dev"])]
        ),
        .target(
            name: "Gtk",
            dependencies: ["CGtk"],
            swiftSettings: strict
        ),
        .target(
            name: "SettingsApp",
            dependencies: [
                "ClientDriver", "Gtk", "GSettingsPaths", "GSettingsSchemas", "PreferencesClient", "PreferencesModel", "PreferencesProxy", "SettingsBundle",
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "prefs-settings",
            dependencies: ["PreferencesModel", "SettingsApp", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strict
        ),

        // MARK: GSettings backend
        // glib-2.0's include directories are GIO's too (gio/gio.h is beside glib.h); gio-2.0's
        // own .pc adds -pthread (through gmodule-no-export-2.0), which SwiftPM drops with a
        // "prohibited flag(s)" warning. The module map links gio-2.0 itself.
        .systemLibrary(
            name: "CGIO",
            pkgConfig: "glib-2.0",
            providers: [.apt(["libglib2.0-dev"])]
        ),
        // GVDB files written and read in pure Swift, the format alone (as GLib's gvdb/): no
        // GLib, no Foundation.
        .target(
            name: "GVDB",
            swiftSettings: strict
        ),
        // dconf's file formats: its databases' rules on GVDB (keys, directories, locks, as
        // dconf-service writes them), its keyfiles (dconf dump, system databases) and locks
        // files. Pure Swift, no GLib.
        .target(
            name: "DconfFormats",
            dependencies: ["GVDB"],
            swiftSettings: strict
        ),
        // The GSettings path rule: a GSettings key's prefsd domain and key, and back (also
        // compiled into the GIO module).
        .target(
            name: "GSettingsPaths",
            dependencies: ["PreferencesModel"],
            swiftSettings: strict
        ),
        // Where prefsd keeps GSettings snapshots and how a snapshot file is laid out: what the
        // service writes and the GIO module (which compiles these sources) reads.
        .target(
            name: "GSettingsSnapshots",
            swiftSettings: strict
        ),
        // glibc's malloc extensions (malloc_trim), for ProcessMemory.
        .systemLibrary(name: "CMalloc"),
        // What a long-running process gives back of its start's memory: the heap's free
        // blocks, the pages of the files it maps read-only (its code among them).
        .target(name: "ProcessMemory", dependencies: ["CMalloc", "StandardExtras"], swiftSettings: strict),
        // GLib alone, for the GVariant mapping; its module map serves scripts/build-gio-module too.
        .systemLibrary(
            name: "CGLib",
            pkgConfig: "glib-2.0",
            providers: [.apt(["libglib2.0-dev"])]
        ),
        // The one GVariant mapping (schema-typed GVariant ↔ wire GVariant, tagged text), in the
        // Embedded Swift subset on GLib's C API so that the GSettings module builds the same sources.
        .target(
            name: "GVariantMapping",
            dependencies: ["CGLib"],
            swiftSettings: strict
        ),
        .target(
            name: "GVariantCoding",
            dependencies: ["CGLib", "GVariantMapping", "PreferencesModel"],
            swiftSettings: strict
        ),
        // dconf's protocol and files as prefsd speaks them: changesets, notifications, values
        // with their GVariant types, the database file dconf's clients map (read as
        // RegularFiles reads a file someone else may control).
        .target(
            name: "Dconf",
            dependencies: ["CGLib", "DBus", "DconfFormats", "GSettingsPaths", "GVDB", "GVariantCoding", "GVariantMapping", "PreferencesModel", "RegularFiles"],
            swiftSettings: strict
        ),
        // xfconf's names, typed values and channel files as prefsd keeps them (no bus): channel
        // C is the domain xfconf.C, property /a/b the key a/b, a value the property-list value
        // and GVariant type of the one mapping (GVariantCoding); channel files parsed from and
        // written to bytes (the service reads and writes the files).
        .target(
            name: "Xfconf",
            dependencies: ["CGLib", "GVariantCoding", "PreferencesModel"],
            swiftSettings: strict
        ),
        // The installed GSettings schemas through GIO's schema API (the settings app's schema
        // pages, the schema types `prefs dconf-import` checks against, and the index the
        // service holds written values to).
        .target(
            name: "GSettingsSchemas",
            dependencies: ["CGIO", "DconfFormats", "GSettingsPaths", "GVariantCoding", "GVariantMapping", "PreferencesModel"],
            swiftSettings: strict
        ),
        // The GSettings backend itself (Sources/GSettingsBackend, the GIO module
        // libgioprefsd.so) is Embedded Swift, built by scripts/build-gio-module, not by SwiftPM.

        // MARK: Executables
        .executableTarget(
            name: "prefsd",
            dependencies: [
                "ProcessMemory",
                "DBus",
                "Dconf",
                "SmallICUData",
                "PreferencesProtocol",
                "PreferencesRoaming",
                "PreferencesService",
                "PreferencesStore",
                "SettingsBundle",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["symbol-order.txt", "read-only-data.ld"],
            swiftSettings: strict,
            // Linked as a service is (`serviceLinking`), with the functions a call runs laid
            // out together, so that a call touches fewer pages of code. Symbols the list
            // names that a build no longer has are skipped.
            linkerSettings: serviceLinking + [
                .unsafeFlags([
                    "-Xlinker", "--symbol-ordering-file=\(prefsdSymbolOrder)", "-Xlinker", "--no-warn-symbol-ordering",
                ])
            ]
        ),

        .target(
            name: "PrefsCommand",
            dependencies: [
                "CGIO",
                "DBus",
                "Dconf",
                "DconfFormats",
                "GSettingsPaths",
                "GSettingsSchemas",
                "GVariantCoding",
                "PreferencesModel",
                "PreferencesProxy",
                "Xfconf",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "prefs",
            dependencies: ["PrefsCommand", "SmallICUData"],
            swiftSettings: strict
        ),

        // MARK: The Settings portal backend
        .target(
            name: "SettingsPortal",
            dependencies: [
                "ClientDriver",
                "DBus",
                "PreferencesClient",
                "PreferencesModel",
                "PreferencesProtocol",
                "PreferencesProxy",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "prefsd-portal",
            dependencies: [
                "SettingsPortal",
                "SmallICUData",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),

        // MARK: Benchmark
        .target(
            name: "BenchmarkKit",
            dependencies: ["ProcessMemory"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "prefs-bench",
            dependencies: [
                "BenchmarkKit",
                "ProcessMemory",
                "BusTestSupport",
                "CGLib",
                "DBus",
                "Dconf",
                "GSettingsSchemas",
                "GSettingsSnapshots",
                "Preferences",
                "PreferencesModel",
                "PreferencesProtocol",
                "PreferencesProxy",
                "PreferencesRoaming",
                "PreferencesStore",
                "SyncthingTestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The least a Swift service on prefsd's dependencies can be (libdbus, GRDB, the
        // Swift runtime and Foundation, linked as prefsd is, with the same ICU data):
        // prefs-bench's memory floor.
        .executableTarget(
            name: "prefs-bench-floor",
            dependencies: ["CDBus", "ProcessMemory", "SmallICUData", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strict,
            linkerSettings: serviceLinking
        ),

        // MARK: Build tools
        // Runs scripts/embed-text (plugin.swift says why not a Swift executable).
        .plugin(
            name: "EmbedIntrospection",
            capability: .buildTool()
        ),

        // MARK: Test support
        // Libraries, not test targets: the tests share them, and prefs-bench starts its
        // private buses and services with the same code (it imports nothing from Tests/).
        .target(
            name: "BusTestSupport",
            dependencies: ["StandardExtras"],
            swiftSettings: strict
        ),
        .target(
            name: "SyncthingTestSupport",
            dependencies: ["BusTestSupport"],
            swiftSettings: strict
        ),
        .target(
            name: "PrefsdTestSupport",
            dependencies: ["BusTestSupport", "DBus", "PreferencesModel", "PreferencesProtocol", "PreferencesProxy"],
            swiftSettings: strict
        ),
        // A GUI program's own Xvfb display and accessibility bus, and the AT-SPI driver
        // (a pyatspi script) that works its window: the Settings app's tests and dconf-editor's.
        .target(
            name: "DesktopTestSupport",
            dependencies: ["BusTestSupport", "PrefsdTestSupport"],
            exclude: ["atspi-driver.py"],
            swiftSettings: strict
        ),
        // The service in the test's own process, on an in-memory connection: no bus, no prefsd.
        .target(
            name: "ServiceTestSupport",
            dependencies: [
                "DBus", "Dconf", "PreferencesModel", "PreferencesService", "PreferencesStore", "StandardExtras",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),

        // MARK: Tests
        .executableTarget(
            name: "preferences-probe",
            dependencies: ["Preferences", "PreferencesModel"],
            path: "Tests/PreferencesProbe",
            swiftSettings: strict
        ),
        .executableTarget(
            name: "sandbox-probe",
            dependencies: ["DBus", "PreferencesModel", "PreferencesProtocol", "PreferencesProxy"],
            path: "Tests/SandboxProbe",
            swiftSettings: strict
        ),
        .testTarget(
            name: "SandboxTests",
            dependencies: [
                "DBus", "PrefsdTestSupport", "PreferencesModel", "PreferencesProtocol", "PreferencesProxy", "PreferencesService",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "PreferencesProxyTests",
            dependencies: ["DBus", "PreferencesModel", "PreferencesProtocol", "PreferencesProxy", "PrefsdTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "PreferencesTests",
            dependencies: [
                "BusTestSupport", "DBus", "Preferences", "PreferencesModel", "PreferencesProtocol", "PrefsdTestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SettingsBundleTests",
            dependencies: ["SettingsBundle", "PreferencesModel"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SettingsAppTests",
            dependencies: ["DesktopTestSupport", "PreferencesModel", "PrefsdTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "DBusTests",
            dependencies: ["DBus", "BusTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ClientDriverTests",
            dependencies: [
                "BusTestSupport", "ClientDriver", "DBus", "PreferencesClient", "PreferencesModel",
                "PreferencesProtocol", "PreferencesProxy", "PrefsdTestSupport",
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SettingsPortalTests",
            dependencies: ["DBus", "PreferencesModel", "PreferencesProtocol", "PrefsdTestSupport", "SettingsPortal"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "BenchmarkTests",
            dependencies: [
                "BenchmarkKit", "BusTestSupport", "DBus", "PreferencesStore",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "PreferencesModelTests",
            dependencies: ["BusTestSupport", "PreferencesModel"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "PreferencesStoreTests",
            dependencies: [
                "PreferencesStore",
                "PreferencesModel",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "PrefsCommandTests",
            dependencies: [
                "DBus", "PrefsCommand", "PrefsdTestSupport", "PreferencesModel", "PreferencesProtocol",
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "PreferencesServiceTests",
            dependencies: [
                "CGLib", "DBus", "Dconf", "PrefsdTestSupport", "PreferencesModel", "PreferencesProtocol", "PreferencesProxy", "PreferencesService",
                "PreferencesStore", "ServiceTestSupport",
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ReliabilityTests",
            dependencies: ["DBus", "PrefsdTestSupport", "PreferencesModel", "PreferencesProtocol", "PreferencesProxy", "PreferencesRoaming"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "PreferencesRoamingTests",
            dependencies: [
                "PreferencesModel", "PreferencesRoaming",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "RoamingTests",
            // Real Syncthing instances on loopback, each beside its own bus, store and prefsd.
            dependencies: ["DBus", "PrefsdTestSupport", "PreferencesModel", "PreferencesProtocol", "PreferencesRoaming", "SyncthingTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "PreferencesClientTests",
            dependencies: ["PreferencesClient", "PreferencesInterface"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GSettingsSchemasTests",
            dependencies: ["GSettingsSchemas", "PreferencesModel"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GVariantMappingTests",
            dependencies: ["CGLib", "GVariantMapping"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "DconfTests",
            // Debian's dconf command, dconf-service, GSettings' dconf module and dconf-editor
            // (its window driven through AT-SPI) against a prefsd that serves dconf's name,
            // each on the test's private bus.
            dependencies: ["CGLib", "DesktopTestSupport", "Dconf", "GVDB", "PreferencesModel", "PreferencesProxy", "PrefsdTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "XfconfTests",
            // Besides the module's own tests: prefsd --xfconf beside Debian's xfconfd, each on
            // the test's private bus, through xfconf-query, libxfconf (PyGObject) and GDBus;
            // xfconfd reads the channel files prefsd writes (GLib parses its answers).
            dependencies: ["BusTestSupport", "CGLib", "GVariantCoding", "PreferencesModel", "PrefsdTestSupport", "Xfconf"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "XfceDesktopTests",
            // Debian's Xfce programs beyond xfconf-query against prefsd --xfconf: xfsettingsd
            // publishing the xsettings channel as XSETTINGS on the test's own Xvfb display.
            dependencies: ["DesktopTestSupport", "PrefsdTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ProcessMemoryTests",
            dependencies: ["PreferencesModel", "PrefsdTestSupport", "ProcessMemory"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GVDBTests",
            // The format and damaged files (dconf's databases among the files read);
            // PyGObject serialises the GVariant values.
            dependencies: ["BusTestSupport", "DconfFormats", "GVDB"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "DconfFormatsTests",
            // dconf's own reader (the dconf command) and dconf-service on a private bus judge
            // the databases; PyGObject serialises the GVariant values.
            dependencies: ["BusTestSupport", "DconfFormats", "GVDB"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GSettingsPathsTests",
            dependencies: ["GSettingsPaths"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GSettingsSnapshotsTests",
            dependencies: ["GSettingsSnapshots"],
            swiftSettings: strict
        ),
        // The README's Swift program, built as it is shown there (DocumentationTests runs it).
        .executableTarget(
            name: "preferences-program",
            dependencies: ["Preferences"],
            path: "examples/preferences-program",
            swiftSettings: strict
        ),
        .testTarget(
            name: "DocumentationTests",
            // The README's and docs/ pages' links and examples; the examples run on a private bus.
            dependencies: ["PreferencesProtocol", "PrefsCommand", "PrefsdTestSupport", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GSettingsCommandTests",
            // `prefs gsettings` beside Debian's gsettings on prefsd's GIO module (built by
            // scripts/build-gio-module, which scripts/run-tests runs first) and on dconf's
            // (dconf-service, prefsd --dconf), over gsettings-desktop-schemas. It runs the
            // built prefs, as a user does.
            dependencies: ["PreferencesModel", "PreferencesProxy", "PrefsdTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GSettingsBackendTests",
            // Drives libgioprefsd.so (built by scripts/build-gio-module, which scripts/run-tests
            // runs first) through gsettings and PyGObject; it does not link the module. It
            // forges snapshots with their layout (GSettingsSnapshots).
            dependencies: ["GSettingsSnapshots", "PreferencesModel", "PreferencesProxy", "PrefsdTestSupport"],
            swiftSettings: strict
        ),
    ]
)
