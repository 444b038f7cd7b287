internal import CDBus

/// Test hook: the body length libdbus reports when it marshals a signal carrying `body`
/// (read from the fixed header: byte 0 is the byte order, bytes 4–7 the body length).
func libdbusBodyLength(of body: [DBusValue]) throws(DBusError) -> Int {
    let raw = try MessageEncoder.encode(.signal(path: "/probe", interface: "probe.Probe", member: "Probe", body: body))
    dbus_message_set_serial(raw.pointer, 1)
    var buffer: UnsafeMutablePointer<CChar>? = nil
    var length: Int32 = 0
    guard dbus_message_marshal(raw.pointer, &buffer, &length) != 0, let buffer, length >= 16 else {
        throw DBusError(code: .outOfMemory)
    }
    defer { dbus_free(buffer) }
    let bytes = UnsafeRawPointer(buffer).assumingMemoryBound(to: UInt8.self)
    let b = (0..<4).map { UInt32(bytes[4 + $0]) }
    let value =
        bytes[0] == UInt8(ascii: "l")
        ? b[0] | b[1] << 8 | b[2] << 16 | b[3] << 24
        : b[3] | b[2] << 8 | b[1] << 16 | b[0] << 24
    return Int(value)
}
