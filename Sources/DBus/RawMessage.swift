internal import CDBus

/// Owns one reference to a libdbus `DBusMessage`, released on deinit.
///
/// `@unchecked Sendable`: libdbus reference counts messages atomically, and a `RawMessage` is
/// never modified after the encoder has built it (libdbus locks it when it is sent); a
/// received message it holds (``ReceivedCall``) is only read, by one thread at a time.
final class RawMessage: @unchecked Sendable {
    /// The message; valid for this object's lifetime.
    let pointer: OpaquePointer

    /// Takes over a reference the caller owns.
    init(owning pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        dbus_message_unref(pointer)
    }
}
