internal import CDBus

extension DBusMessage {
    /// The message as it goes on the wire (serial 1), marshalled by libdbus
    /// (`dbus_message_marshal`): what GDBus reads back with `g_dbus_message_new_from_blob`,
    /// for a message kept in a file rather than sent.
    /// - Throws: `DBusError` when the message cannot be encoded, or libdbus runs out of memory.
    public func marshalled() throws(DBusError) -> [UInt8] {
        let raw = try MessageEncoder.encode(self)
        dbus_message_set_serial(raw.pointer, 1)
        var buffer: UnsafeMutablePointer<CChar>? = nil
        var length: Int32 = 0
        guard dbus_message_marshal(raw.pointer, &buffer, &length) != 0, let buffer, length > 0 else {
            throw DBusError(code: .outOfMemory)
        }
        defer { dbus_free(buffer) }
        return Array(UnsafeRawBufferPointer(start: buffer, count: Int(length)))
    }
}
