import CGSettingsBackend

/// The GObject type `PrefsdSettingsBackend`, a `GSettingsBackend` whose instances hold a
/// ``Backend``: registration, and the virtual methods, each turning GLib's arguments into
/// Swift values and back. The only file that sees GSettings' calls.
enum BackendType {
    /// The type's name, as `G_MESSAGES_DEBUG` and `GSETTINGS_BACKEND` users may meet it.
    static let name: StaticString = "PrefsdSettingsBackend"

    /// The class of GSettingsBackend, for chaining `finalize` up. Global mutable state,
    /// safe because GObject writes it once, in `classInit`, under its type lock, before
    /// any instance exists (so before any `finalize` reads it).
    nonisolated(unsafe) private static var parentClass: UnsafeMutablePointer<GObjectClass>?

    /// Registers the type (once) and returns it.
    static func register() -> GType {
        let existing = g_type_from_name(UnsafeRawPointer(name.utf8Start).assumingMemoryBound(to: CChar.self))
        if existing != 0 { return existing }
        return g_type_register_static_simple(
            prefsd_settings_backend_parent_type(), UnsafeRawPointer(name.utf8Start).assumingMemoryBound(to: CChar.self),
            guint(MemoryLayout<GSettingsBackendClass>.size), classInit,
            guint(MemoryLayout<PrefsdSettingsBackendInstance>.size), instanceInit,
            GTypeFlags(rawValue: 0))
    }

    private static func backend(_ instance: UnsafeMutableRawPointer) -> Backend {
        let pointer = instance.assumingMemoryBound(to: PrefsdSettingsBackendInstance.self).pointee.backend!
        return Unmanaged<Backend>.fromOpaque(pointer).takeUnretainedValue()
    }

    private static let instanceInit: GInstanceInitFunc = { instance, _ in
        guard let instance else { return }
        let raw = UnsafeMutableRawPointer(instance)
        let backend = Backend(instance: raw)
        raw.assumingMemoryBound(to: PrefsdSettingsBackendInstance.self).pointee.backend = Unmanaged.passRetained(backend).toOpaque()
        backend.start()
    }

    private static let finalize: @convention(c) (UnsafeMutablePointer<GObject>?) -> Void = { object in
        guard let object else { return }
        let instance = UnsafeMutableRawPointer(object).assumingMemoryBound(to: PrefsdSettingsBackendInstance.self)
        if let pointer = instance.pointee.backend {
            let backend = Unmanaged<Backend>.fromOpaque(pointer)
            backend.takeUnretainedValue().close()
            backend.release()
            instance.pointee.backend = nil
        }
        BackendType.parentClass?.pointee.finalize?(object)
    }

    private static func string(_ text: UnsafePointer<gchar>) -> String {
        String(cString: text)
    }

    private static func typeString(_ type: OpaquePointer) -> String {
        guard let text = g_variant_type_dup_string(type) else { return "" }
        defer { g_free(text) }
        return String(cString: text)
    }

    private static let classInit: GClassInitFunc = { klass, _ in
        guard let klass else { return }
        BackendType.parentClass = g_type_class_peek_parent(klass)?.assumingMemoryBound(to: GObjectClass.self)
        klass.assumingMemoryBound(to: GObjectClass.self).pointee.finalize = BackendType.finalize
        let backendClass = klass.assumingMemoryBound(to: GSettingsBackendClass.self)

        backendClass.pointee.read = { backend, key, expectedType, defaultValue in
            guard let backend, let key, let expectedType else { return nil }
            let core = BackendType.backend(backend)
            if defaultValue != 0 {
                return core.read(BackendType.string(key), type: BackendType.typeString(expectedType), defaultValue: true)
            }
            // An unchanged value as last rendered: no allocation.
            if let cached = core.cachedRead(key, type: expectedType) { return cached }
            return core.readAndKeep(key, type: expectedType)
        }
        backendClass.pointee.read_user_value = { backend, key, expectedType in
            guard let backend, let key, let expectedType else { return nil }
            return BackendType.backend(backend).read(BackendType.string(key), type: BackendType.typeString(expectedType), userValue: true)
        }
        backendClass.pointee.get_writable = { backend, key in
            guard let backend, let key else { return 0 }
            return BackendType.backend(backend).isWritable(BackendType.string(key)) ? 1 : 0
        }
        backendClass.pointee.write = { backend, key, value, tag in
            guard let backend, let key, let value else { return 0 }
            // GSettings may hand a floating value: the backend owns it from here.
            let owned = g_variant_ref_sink(value)!
            defer { g_variant_unref(owned) }
            return BackendType.backend(backend).write([(key: BackendType.string(key), value: owned)], tag: tag) ? 1 : 0
        }
        backendClass.pointee.write_tree = { backend, tree, tag in
            guard let backend, let tree else { return 0 }
            var changes: [(key: String, value: OpaquePointer?)] = []
            withUnsafeMutablePointer(to: &changes) { list in
                prefsd_tree_foreach(
                    tree,
                    { key, value, context in
                        guard let key, let context else { return }
                        let list = context.assumingMemoryBound(to: [(key: String, value: OpaquePointer?)].self)
                        list.pointee.append((String(cString: key), value))
                    }, list)
            }
            if changes.isEmpty { return 1 }
            return BackendType.backend(backend).write(changes, tag: tag) ? 1 : 0
        }
        backendClass.pointee.reset = { backend, key, tag in
            guard let backend, let key else { return }
            _ = BackendType.backend(backend).write([(key: BackendType.string(key), value: nil)], tag: tag)
        }
        backendClass.pointee.subscribe = { backend, path in
            guard let backend, let path else { return }
            BackendType.backend(backend).subscribe(BackendType.string(path))
        }
        backendClass.pointee.unsubscribe = { _, _ in
            // Domains stay loaded and followed: a later GSettings object of the same
            // schema reads at once.
        }
        backendClass.pointee.sync = { backend in
            guard let backend else { return }
            BackendType.backend(backend).sync()
        }
    }
}
