import Foundation

/// prefsd's GSettings module as scripts/build-gio-module builds it
/// (`.build/gio-module/libgioprefsd.so`; SwiftPM does not build it, scripts/run-tests
/// does before the tests that load it), or `$PREFSD_GIO_MODULE`.
public enum BuiltGIOModule {
    /// The module's file.
    /// - Throws: ``FixtureError`` saying how to build it when it is missing.
    public static func url() throws -> URL {
        if let path = ProcessInfo.processInfo.environment["PREFSD_GIO_MODULE"] { return URL(fileURLWithPath: path) }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let module = root.appendingPathComponent(".build/gio-module/libgioprefsd.so")
        guard FileManager.default.fileExists(atPath: module.path) else {
            throw FixtureError("\(module.path) is missing: build it with scripts/build-gio-module (scripts/run-tests does)")
        }
        return module
    }
}
