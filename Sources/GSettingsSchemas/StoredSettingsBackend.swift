import CGIO

/// The GObject type `PrefsdStoredSettings`, the read-only `GSettingsBackend` of
/// ``StoredSettings``: registration, and the virtual methods, each turning GLib's arguments
/// into Swift values and back. It never writes: GSettings objects over it are only read.
enum StoredSettingsBackend {
    /// The type's name.
    static let name = "PrefsdStoredSettings"

    /// The class of GSettingsBackend, for chaining `finalize` up. Written once, in
    /// `classInit`, under GObject's type lock, before any instance exists (so before any
    /// `finalize` reads it).
    nonisolated(unsafe) private static var parentClass: UnsafeMutablePointer<GObjectClass>?

    /// The type, registered on first use.
    static let type: GType = g_type_register_static_simple(
        prefsd_settings_backend_parent_type(), name, guint(MemoryLayout<GSettingsBackendClass>.size), classInit,
        guint(MemoryLayout<PrefsdStoredSettingsInstance>.size), nil, GTypeFlags(rawValue: 0))

    /// A new instance answering from `values` (which it keeps until finalized).
    static func make(_ values: StoredSettings.Values) -> UnsafeMutablePointer<GSettingsBackend> {
        let object = g_object_new_with_properties(type, 0, nil, nil)!
        let instance = UnsafeMutableRawPointer(object).assumingMemoryBound(to: PrefsdStoredSettingsInstance.self)
        instance.pointee.values = Unmanaged.passRetained(values).toOpaque()
        return UnsafeMutableRawPointer(object).assumingMemoryBound(to: GSettingsBackend.self)
    }

    private static func values(_ backend: UnsafeMutablePointer<GSettingsBackend>) -> StoredSettings.Values? {
        let instance = UnsafeMutableRawPointer(backend).assumingMemoryBound(to: PrefsdStoredSettingsInstance.self)
        return instance.pointee.values.map { Unmanaged<StoredSettings.Values>.fromOpaque($0).takeUnretainedValue() }
    }

    private static let finalize: @convention(c) (UnsafeMutablePointer<GObject>?) -> Void = { object in
        guard let object else { return }
        let instance = UnsafeMutableRawPointer(object).assumingMemoryBound(to: PrefsdStoredSettingsInstance.self)
        if let pointer = instance.pointee.values {
            Unmanaged<StoredSettings.Values>.fromOpaque(pointer).release()
            instance.pointee.values = nil
        }
        StoredSettingsBackend.parentClass?.pointee.finalize?(object)
    }

    private static let classInit: GClassInitFunc = { klass, _ in
        guard let klass else { return }
        StoredSettingsBackend.parentClass = g_type_class_peek_parent(klass)?.assumingMemoryBound(to: GObjectClass.self)
        klass.assumingMemoryBound(to: GObjectClass.self).pointee.finalize = StoredSettingsBackend.finalize
        let backendClass = klass.assumingMemoryBound(to: GSettingsBackendClass.self)
        backendClass.pointee.read = { backend, key, expectedType, defaultValue in
            guard let backend, let key, let expectedType, let values = StoredSettingsBackend.values(backend),
                let typeText = g_variant_type_dup_string(expectedType)
            else { return nil }
            defer { g_free(typeText) }
            return values.read(String(cString: key), type: String(cString: typeText), defaultValue: defaultValue != 0)
        }
        backendClass.pointee.get_writable = { backend, key in
            guard let backend, let key, let values = StoredSettingsBackend.values(backend) else { return 0 }
            return values.isWritable(String(cString: key)) ? 1 : 0
        }
        // Never written through: writes fail, resets do nothing.
        backendClass.pointee.write = { _, _, value, _ in
            if let value { g_variant_unref(g_variant_ref_sink(value)) }
            return 0
        }
        backendClass.pointee.write_tree = { _, _, _ in 0 }
        backendClass.pointee.reset = { _, _, _ in }
    }
}
