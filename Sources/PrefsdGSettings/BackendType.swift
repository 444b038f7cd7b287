import CGIO
import GVariantCoding
import PreferencesModel

/// The GObject type `PrefsdSettingsBackend`, a `GSettingsBackend` whose instances hold a
/// ``BackendCore``: registration, and the virtual methods, each turning GLib's arguments
/// into Swift values and back. The only file that sees GSettings' calls.
enum BackendType {
    /// The type's name, as `G_MESSAGES_DEBUG` and `GSETTINGS_BACKEND` users may meet it.
    static let name = "PrefsdSettingsBackend"

    /// The class of GSettingsBackend, for chaining `finalize` up.
    nonisolated(unsafe) private static var parentClass: UnsafeMutablePointer<GObjectClass>?

    /// Registers the type (once) and returns it.
    static func register() -> GType {
        let existing = g_type_from_name(name)
        if existing != 0 { return existing }
        return g_type_register_static_simple(
            cgio_settings_backend_type(), name,
            guint(MemoryLayout<GSettingsBackendClass>.size), classInit,
            guint(MemoryLayout<CGIOPrefsdBackend>.size), instanceInit,
            GTypeFlags(rawValue: 0))
    }

    /// What an instance holds: the backend's work, and the values last handed to GSettings.
    private final class Parts: Sendable {
        let core: BackendCore
        let rendered = RenderedValues()

        init(core: BackendCore) {
            self.core = core
        }
    }

    private static func parts(_ backend: UnsafeMutableRawPointer) -> Parts {
        let instance = backend.assumingMemoryBound(to: CGIOPrefsdBackend.self)
        return Unmanaged<Parts>.fromOpaque(instance.pointee.core!).takeUnretainedValue()
    }

    private static func core(_ backend: UnsafeMutableRawPointer) -> BackendCore {
        parts(backend).core
    }

    private static let instanceInit: GInstanceInitFunc = { instance, _ in
        guard let instance else { return }
        let raw = UnsafeMutableRawPointer(instance)
        let parts = Parts(core: BackendCore(notifier: GLibNotifier(instance: raw)))
        raw.assumingMemoryBound(to: CGIOPrefsdBackend.self).pointee.core = Unmanaged.passRetained(parts).toOpaque()
    }

    private static let finalize: @convention(c) (UnsafeMutablePointer<GObject>?) -> Void = { object in
        guard let object else { return }
        let instance = UnsafeMutableRawPointer(object).assumingMemoryBound(to: CGIOPrefsdBackend.self)
        if let pointer = instance.pointee.core {
            let parts = Unmanaged<Parts>.fromOpaque(pointer)
            parts.takeUnretainedValue().core.close()
            parts.release()
            instance.pointee.core = nil
        }
        BackendType.parentClass?.pointee.finalize?(object)
    }

    private static let classInit: GClassInitFunc = { klass, _ in
        guard let klass else { return }
        BackendType.parentClass = g_type_class_peek_parent(klass)?.assumingMemoryBound(to: GObjectClass.self)
        klass.assumingMemoryBound(to: GObjectClass.self).pointee.finalize = BackendType.finalize
        let backend = klass.assumingMemoryBound(to: GSettingsBackendClass.self)

        backend.pointee.read = { backend, key, expectedType, defaultValue in
            guard let backend, let key, let expectedType else { return nil }
            let parts = BackendType.parts(backend)
            if defaultValue != 0 {
                guard let value = parts.core.read(String(cString: key), defaultValue: true) else { return nil }
                return BackendType.variant(value, expectedType)
            }
            // The change count is read before the value: a change after it makes the entry stale.
            let changeCount = parts.core.changeCount
            if let rendered = parts.rendered.value(key, type: expectedType, changeCount: changeCount) { return rendered }
            guard let value = parts.core.read(String(cString: key)), let variant = BackendType.variant(value, expectedType) else { return nil }
            return parts.rendered.keep(variant, key, type: expectedType, changeCount: changeCount)
        }
        backend.pointee.read_user_value = { backend, key, expectedType in
            guard let backend, let key, let expectedType else { return nil }
            guard let value = BackendType.core(backend).read(String(cString: key), userValue: true) else { return nil }
            return BackendType.variant(value, expectedType)
        }
        backend.pointee.get_writable = { backend, key in
            guard let backend, let key else { return 0 }
            return BackendType.core(backend).isWritable(String(cString: key)) ? 1 : 0
        }
        backend.pointee.write = { backend, key, value, tag in
            guard let backend, let key, let value else { return 0 }
            let change = (key: String(cString: key), value: Optional(VariantCoding.propertyList(from: value)))
            return BackendType.core(backend).write([change], tag: tag.map(OriginTag.init)) ? 1 : 0
        }
        backend.pointee.write_tree = { backend, tree, tag in
            guard let backend, let tree else { return 0 }
            var changes: [(key: String, value: PropertyListValue?)] = []
            withUnsafeMutablePointer(to: &changes) { list in
                cgio_tree_foreach(tree, { key, value, context in
                    guard let key, let context else { return }
                    let list = context.assumingMemoryBound(to: [(key: String, value: PropertyListValue?)].self)
                    list.pointee.append((String(cString: key), value.map(VariantCoding.propertyList(from:))))
                }, list)
            }
            if changes.isEmpty { return 1 }
            return BackendType.core(backend).write(changes, tag: tag.map(OriginTag.init)) ? 1 : 0
        }
        backend.pointee.reset = { backend, key, tag in
            guard let backend, let key else { return }
            _ = BackendType.core(backend).write([(key: String(cString: key), value: nil)], tag: tag.map(OriginTag.init))
        }
        backend.pointee.subscribe = { backend, path in
            guard let backend, let path else { return }
            BackendType.core(backend).subscribe(String(cString: path))
        }
        backend.pointee.unsubscribe = { _, _ in
            // Domains stay loaded and followed: a later GSettings object of the same
            // schema reads at once.
        }
        backend.pointee.sync = { backend in
            guard let backend else { return }
            BackendType.core(backend).sync()
        }
    }

    private static func variant(_ value: PropertyListValue, _ expectedType: OpaquePointer) -> OpaquePointer? {
        guard let type = g_variant_type_dup_string(expectedType) else { return nil }
        defer { g_free(type) }
        return VariantCoding.variant(from: value, type: String(cString: type))
    }
}
