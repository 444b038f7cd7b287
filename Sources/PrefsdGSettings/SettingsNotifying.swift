/// Where the backend's news goes: GLib's `GSettingsBackend` signals in the module, a
/// recorder in a test. Called from any thread, never while the backend holds its lock.
protocol SettingsNotifying: Sendable {
    /// The values of these GSettings full keys changed (`tag`: the origin tag GSettings
    /// gave with the write that changed them, for the backend's own writes).
    func keysChanged(_ keys: [String], tag: OriginTag?)
    /// Every key under the GSettings directory `path` may have changed: its value, and
    /// whether it is writable.
    func pathChanged(_ path: String)
    /// Whether these GSettings full keys are writable changed.
    func writableChanged(_ keys: [String])
    /// Something the user should hear about (a write prefsd refused).
    func report(_ message: String)
}

/// GSettings' origin tag of a write: an opaque pointer handed back with the change signals.
struct OriginTag: @unchecked Sendable {
    /// The pointer GSettings gave; never dereferenced.
    let pointer: UnsafeMutableRawPointer
}
