internal import CGtk

/// The GLib main loop the UI runs on: work from other threads (the proxy's replies and
/// signals) comes back to it here.
public enum MainContext {
    /// Runs `body` on the main loop's thread, soon, in order with other posts.
    public static func post(_ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(IdleBox(body)).toOpaque()
        g_idle_add_full(
            G_PRIORITY_DEFAULT,
            { data in
                if let data { Unmanaged<IdleBox>.fromOpaque(data).takeUnretainedValue().body() }
                return 0  // G_SOURCE_REMOVE
            }, box,
            { data in
                if let data { Unmanaged<IdleBox>.fromOpaque(data).release() }
            })
    }
}

/// A weak handle on a UI object (not `Sendable`) that other threads may hold and post
/// work to: the object is only ever touched on the main loop's thread, and the work is
/// dropped when the object is gone.
///
/// Unchecked `Sendable`: the handle is made on the main thread and its object read only
/// in ``post(_:)``'s closure, which runs there.
public final class MainThreadHandle<Value: AnyObject>: @unchecked Sendable {
    private weak var value: Value?

    /// A handle on `value`; make it on the main thread.
    public init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the object on the main thread, if the object is still there.
    public func post(_ body: @escaping @Sendable (Value) -> Void) {
        MainContext.post { [self] in
            if let value { body(value) }
        }
    }
}

private final class IdleBox {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}
