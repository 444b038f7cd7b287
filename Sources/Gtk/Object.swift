internal import CGtk

/// A GObject this layer owns one reference to, released when the Swift object goes.
///
/// Every GTK and libadwaita object the Settings app uses is wrapped in a subclass; the
/// C pointers never leave this module. Floating references (new widgets) are sunk, so the
/// wrapper holds a real reference whether or not a parent also holds one. Use GTK objects
/// on the main thread only (the thread running ``Application/run(arguments:)``).
open class Object {
    /// The object; never NULL.
    let raw: UnsafeMutableRawPointer

    /// How a pointer handed to ``init(_:ownership:)`` is held.
    enum Ownership {
        /// A new floating or transfer-full reference: sink it, it is ours.
        case new
        /// A reference someone else owns (a window owned by GTK): take one of our own.
        case borrowed
    }

    init(_ pointer: UnsafeMutableRawPointer, ownership: Ownership = .new) {
        raw = pointer
        Self.adopt(pointer, ownership)
    }

    /// Wraps an object GTK declares final (imported as an opaque pointer). GLib aborts
    /// the process when it cannot allocate, so a constructor never returns NULL.
    init(_ pointer: OpaquePointer?, ownership: Ownership = .new) {
        guard let pointer else { fatalError("GTK returned no object") }
        raw = UnsafeMutableRawPointer(pointer)
        Self.adopt(raw, ownership)
    }

    private static func adopt(_ pointer: UnsafeMutableRawPointer, _ ownership: Ownership) {
        switch ownership {
        case .new:
            if g_object_is_floating(pointer) != 0 { g_object_ref_sink(pointer) }
        case .borrowed:
            g_object_ref(pointer)
        }
    }

    deinit {
        g_object_unref(raw)
    }

    /// Sets a string property by name (for properties 4.8 has no setter function for).
    func setProperty(_ name: String, _ value: String) {
        cgtk_set_string_property(raw, name, value)
    }

    /// The object as a typed C pointer, for calls into GTK (the type comes from the call).
    func c<T>() -> UnsafeMutablePointer<T> { raw.assumingMemoryBound(to: T.self) }
    /// The object as an opaque C pointer, for types GTK declares final.
    func c() -> OpaquePointer { OpaquePointer(raw) }

    /// Calls `handler` each time the object emits `signal`, a signal whose handlers take
    /// only the instance (`"clicked"`, `"toggled"`, `"changed"`, `"activate"` …), until the
    /// object is finalized. The handler should hold the wrapper weakly: it lives as long as
    /// the GObject does.
    public func connect(_ signal: String, _ handler: @escaping () -> Void) {
        let box = Unmanaged.passRetained(SignalBox(handler)).toOpaque()
        let trampoline = unsafeBitCast(signalTrampoline2 as @convention(c) (gpointer?, gpointer?) -> Void, to: GCallback.self)
        g_signal_connect_data(
            raw, signal, trampoline, box,
            { data, _ in
                if let data { Unmanaged<SignalBox>.fromOpaque(data).release() }
            }, GConnectFlags(rawValue: 0))
    }

    /// Like ``connect(_:_:)`` for signals whose handlers take one argument after the
    /// instance (`"row-selected"` of a list box, every `"notify::…"`): the argument is dropped.
    public func connectIgnoringArgument(_ signal: String, _ handler: @escaping () -> Void) {
        let box = Unmanaged.passRetained(SignalBox(handler)).toOpaque()
        let trampoline = unsafeBitCast(signalTrampoline3 as @convention(c) (gpointer?, gpointer?, gpointer?) -> Void, to: GCallback.self)
        g_signal_connect_data(
            raw, signal, trampoline, box,
            { data, _ in
                if let data { Unmanaged<SignalBox>.fromOpaque(data).release() }
            }, GConnectFlags(rawValue: 0))
    }
}

/// A signal handler kept alive by the GObject's signal connection.
final class SignalBox {
    let handler: () -> Void
    init(_ handler: @escaping () -> Void) { self.handler = handler }
}

private func signalTrampoline2(_ instance: gpointer?, _ data: gpointer?) {
    guard let data else { return }
    Unmanaged<SignalBox>.fromOpaque(data).takeUnretainedValue().handler()
}

private func signalTrampoline3(_ instance: gpointer?, _ argument: gpointer?, _ data: gpointer?) {
    guard let data else { return }
    Unmanaged<SignalBox>.fromOpaque(data).takeUnretainedValue().handler()
}

/// A C string GLib allocated, as a Swift string (freed).
func takeString(_ pointer: UnsafeMutablePointer<gchar>?) -> String? {
    guard let pointer else { return nil }
    defer { g_free(pointer) }
    return String(cString: pointer)
}

/// A C string GTK owns, as a Swift string.
func borrowString(_ pointer: UnsafePointer<gchar>?) -> String? {
    pointer.map { String(cString: $0) }
}
