import CGSettingsBackend

/// The priority of the `prefsd` implementation of `gsettings-backend`: below dconf's 100,
/// so dconf stays the default wherever it is installed, and above the `memory`, `keyfile`
/// and `null` backends (10), which keep nothing across runs. `GSETTINGS_BACKEND=prefsd`
/// selects prefsd whatever the priorities.
let backendPriority: Int32 = 50

/// Called by GIO when it loads the module: registers the backend type and implements
/// the `gsettings-backend` extension point. Opens no connection: the bus is reached only
/// when GSettings creates the backend and reads.
@_cdecl("g_io_module_load")
public func gioModuleLoad(_ module: OpaquePointer?) {
    guard let module else { return }
    // Keep the module loaded for good: the type it registers lives as long as the process.
    _ = g_type_module_use(prefsd_type_module(module))
    g_io_extension_point_implement(prefsd_settings_backend_extension_point(), BackendType.register(), "prefsd", backendPriority)
}

/// Called by GIO before unloading the module; the module stays in use, so nothing to do.
@_cdecl("g_io_module_unload")
public func gioModuleUnload(_ module: OpaquePointer?) {}

/// The extension points the module implements, for `gio-querymodules`' cache.
@_cdecl("g_io_module_query")
public func gioModuleQuery() -> UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>? {
    g_strsplit(prefsd_settings_backend_extension_point(), "!", 0)
}
