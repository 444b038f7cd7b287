import CGIO
import GSettingsPaths

/// Tells GLib of the backend's news through `GSettingsBackend`'s signal functions, which
/// queue each signal in the main context of every GSettings object that watches the
/// backend. It holds the backend weakly, as dconf does: news that comes while the backend
/// is being finalized is dropped.
final class GLibNotifier: SettingsNotifying, @unchecked Sendable {
    /// At most this many keys go in one `g_settings_backend_keys_changed` (GSettings
    /// asserts on more than 255 keys of one object changing in one call).
    static let keysPerSignal = 100

    private let backend: UnsafeMutablePointer<GWeakRef>

    /// A notifier for `instance`, a `GSettingsBackend` being constructed.
    init(instance: UnsafeMutableRawPointer) {
        backend = .allocate(capacity: 1)
        backend.initialize(to: GWeakRef())
        g_weak_ref_init(backend, instance)
    }

    deinit {
        g_weak_ref_clear(backend)
        backend.deallocate()
    }

    private func withBackend(_ body: (UnsafeMutablePointer<GSettingsBackend>) -> Void) {
        guard let object = g_weak_ref_get(backend) else { return }
        defer { g_object_unref(object) }
        body(object.assumingMemoryBound(to: GSettingsBackend.self))
    }

    func keysChanged(_ keys: [String], tag: OriginTag?) {
        withBackend { backend in
            if keys.count == 1 {
                g_settings_backend_changed(backend, keys[0], tag?.pointer)
                return
            }
            var byDirectory: [String: [String]] = [:]
            for key in keys {
                guard let location = SettingsLocation(settingsKey: key) else { continue }
                byDirectory[SettingsLocation.settingsPath(ofDomain: location.domain), default: []].append(location.key)
            }
            for (directory, items) in byDirectory.sorted(by: { $0.key < $1.key }) {
                for start in stride(from: 0, to: items.count, by: Self.keysPerSignal) {
                    withCStrings(Array(items[start..<min(start + Self.keysPerSignal, items.count)])) { list in
                        g_settings_backend_keys_changed(backend, directory, list, tag?.pointer)
                    }
                }
            }
        }
    }

    func pathChanged(_ path: String) {
        withBackend { backend in
            g_settings_backend_path_changed(backend, path, nil)
            g_settings_backend_path_writable_changed(backend, path)
        }
    }

    func writableChanged(_ keys: [String]) {
        withBackend { backend in
            for key in keys { g_settings_backend_writable_changed(backend, key) }
        }
    }

    func report(_ message: String) {
        message.withCString { text in
            withVaList([text]) { g_logv("prefsd", G_LOG_LEVEL_MESSAGE, "%s", $0) }
        }
    }

    /// Calls `body` with a NULL-terminated array of C strings.
    private func withCStrings(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<gchar>?>) -> Void) {
        let copies: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
        defer { for copy in copies { free(copy) } }
        let list: [UnsafePointer<gchar>?] = copies.map { $0.map { UnsafePointer($0) } } + [nil]
        list.withUnsafeBufferPointer { body($0.baseAddress!) }
    }
}
