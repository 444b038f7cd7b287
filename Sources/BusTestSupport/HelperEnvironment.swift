import Foundation

/// The environment every helper process a test starts begins from: this process's, made
/// independent of the GIO modules and GSettings of the machine. A desktop's GIO modules
/// (glib-networking's proxy resolver, gvfs, dconf) load into every GIO program and some
/// read GSettings schemas at start: a portal whose `XDG_DATA_DIRS` holds none aborted
/// ("No GSettings schemas are installed on the system") on a machine with GNOME installed.
/// So GIO loads modules from an empty directory (a test's own module comes through
/// `GIO_EXTRA_MODULES`), uses the local file system only, and keeps settings in memory
/// unless a test names another backend.
public var helperEnvironment: [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment["GIO_MODULE_DIR"] = emptyModuleDirectory
    environment["GIO_USE_VFS"] = "local"
    environment["GSETTINGS_BACKEND"] = "memory"
    return environment
}

/// An empty directory for `GIO_MODULE_DIR`, made once per test process.
private let emptyModuleDirectory: String = {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("prefsd-tests-no-gio-modules-\(getpid())", isDirectory: true).path
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}()
