import CGSettingsBackend

/// GSettings told what changed, once the backend's mutex is released (its signal
/// functions may call back into the backend).
extension Backend {
    // MARK: Telling GSettings

    /// At most this many keys go in one `g_settings_backend_keys_changed` (GSettings
    /// asserts on more than 255 keys of one object changing in one call).
    static let keysPerSignal = 100

    func withInstance(_ body: (UnsafeMutablePointer<GSettingsBackend>) -> Void) {
        guard let object = g_weak_ref_get(instance) else { return }
        defer { g_object_unref(object) }
        body(object.assumingMemoryBound(to: GSettingsBackend.self))
    }

    func deliver(_ news: News) {
        for message in news.reports { prefsd_log_message(message) }
        withInstance { backend in
            for (domain, keys) in news.writable {
                for key in keys {
                    let full = GSettingsPath.settingsPath(ofDomain: domain.name) + key
                    g_settings_backend_writable_changed(backend, full)
                }
            }
            for domain in news.paths {
                let path = GSettingsPath.settingsPath(ofDomain: domain.name)
                g_settings_backend_path_changed(backend, path, nil)
                g_settings_backend_path_writable_changed(backend, path)
            }
            for (domain, keys) in news.keys {
                // Only keys a GSettings key maps to (others are not GSettings'), by directory.
                var mapped: [String] = []
                for key in keys where GSettingsPath(domain: domain.name, key: key) != nil { mapped.append(key) }
                notify(backend, directory: GSettingsPath.settingsPath(ofDomain: domain.name), keys: mapped, tag: nil)
            }
        }
    }

    /// Tells GSettings that the full keys `keys` changed, with the write's origin tag.
    func keysChanged(_ keys: [String], tag: UnsafeMutableRawPointer?) {
        withInstance { backend in
            if keys.count == 1 {
                g_settings_backend_changed(backend, keys[0], tag)
                return
            }
            var byDirectory: [String: [String]] = [:]
            for key in keys {
                guard let location = GSettingsPath(settingsKey: key) else { continue }
                byDirectory[GSettingsPath.settingsPath(ofDomain: location.domain), default: []].append(location.key)
            }
            for (directory, items) in byDirectory.sorted(by: { $0.key < $1.key }) {
                notify(backend, directory: directory, keys: items, tag: tag)
            }
        }
    }

    func notify(_ backend: UnsafeMutablePointer<GSettingsBackend>, directory: String, keys: [String], tag: UnsafeMutableRawPointer?) {
        var start = 0
        while start < keys.count {
            let end = min(start + Self.keysPerSignal, keys.count)
            let copies: [UnsafeMutablePointer<CChar>?] = keys[start..<end].map { strdup($0) }
            let list: [UnsafePointer<gchar>?] = copies.map { $0.map { UnsafePointer($0) } } + [nil]
            list.withUnsafeBufferPointer { g_settings_backend_keys_changed(backend, directory, $0.baseAddress, tag) }
            for copy in copies { free(copy) }
            start = end
        }
    }

    /// Drops the message filter (the GObject is being finalized); the filter's reference
    /// is released by GDBus once no filter call runs.
}
