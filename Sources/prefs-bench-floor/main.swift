import CDBus
import Foundation
import GRDB
import ProcessMemory

// The Swift floor: the least a Swift service on prefsd's dependencies can be. It links
// libdbus, GRDB (with SQLite) and the Swift runtime and Foundation exactly as prefsd does,
// and does nothing else: one thread polls the bus and standard input, and each `Write`
// (ssv) is committed to an SQLite table through GRDB (WAL, `synchronous = FULL`) before
// its empty reply. libdbus answers `Peer.Ping` itself. Once it owns its name, it gives back
// what its start freed and the pages of files it read, as prefsd does once loaded. prefs-bench
// measures its memory beside prefsd's: what prefsd adds over what its dependencies cost.
//
// Usage: prefs-bench-floor ADDRESS NAME PATH INTERFACE DATABASE. It creates DATABASE, owns
// NAME (or exits 1 saying why), serves PATH, prints `ready` and runs until its standard
// input closes.

/// Writes `message` to standard error and exits 1.
func fail(_ message: String) -> Never {
    let line = "prefs-bench-floor: \(message)\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
    exit(1)
}

/// The floor's table, committed to once per `Write`.
final class FloorStore {
    private let database: DatabaseQueue

    init(path: String) throws {
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        database = try DatabaseQueue(path: path, configuration: configuration)
        try database.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS entries (domain TEXT, key TEXT, value BLOB, PRIMARY KEY (domain, key))")
        }
    }

    /// Commits `value` (the call as received) under `domain` and `key`.
    func write(domain: String, key: String, value: Data) throws {
        try database.write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO entries (domain, key, value) VALUES (?, ?, ?)", arguments: [domain, key, value])
        }
    }
}

/// The string at `iterator`, when the argument there is one.
func stringArgument(_ iterator: inout DBusMessageIter) -> String? {
    guard dbus_message_iter_get_arg_type(&iterator) == CDBUS_TYPE_STRING else { return nil }
    var value: UnsafePointer<CChar>?
    dbus_message_iter_get_basic(&iterator, &value)
    return value.map { String(cString: $0) }
}

/// `Write(ssv)`: the reply to send, a method return or an error.
func handleWrite(_ message: OpaquePointer, store: FloorStore) -> OpaquePointer? {
    var iterator = DBusMessageIter()
    guard dbus_message_iter_init(message, &iterator) != 0, let domain = stringArgument(&iterator),
        dbus_message_iter_next(&iterator) != 0, let key = stringArgument(&iterator),
        dbus_message_iter_next(&iterator) != 0, dbus_message_iter_get_arg_type(&iterator) == CDBUS_TYPE_VARIANT
    else {
        return dbus_message_new_error(message, "org.freedesktop.DBus.Error.InvalidArgs", "Write takes (ssv)")
    }
    var bytes: UnsafeMutablePointer<CChar>?
    var length: Int32 = 0
    guard dbus_message_marshal(message, &bytes, &length) != 0, let bytes else { fail("out of memory") }
    defer { dbus_free(bytes) }
    do {
        try store.write(domain: domain, key: key, value: Data(bytes: bytes, count: Int(length)))
    } catch {
        return dbus_message_new_error(message, "org.freedesktop.DBus.Error.Failed", "\(error)")
    }
    return dbus_message_new_method_return(message)
}

let arguments = CommandLine.arguments
guard arguments.count == 6 else { fail("usage: prefs-bench-floor ADDRESS NAME PATH INTERFACE DATABASE") }
let store: FloorStore
do {
    store = try FloorStore(path: arguments[5])
} catch {
    fail("\(arguments[5]): \(error)")
}

var error = DBusError()
dbus_error_init(&error)
/// What libdbus said of the last failure.
func reason(_ error: DBusError) -> String {
    error.message.map { String(cString: $0) } ?? "no reason given"
}
guard let bus = dbus_connection_open_private(arguments[1], &error) else { fail("\(arguments[1]): \(reason(error))") }
guard dbus_bus_register(bus, &error) != 0 else { fail("Hello: \(reason(error))") }
guard dbus_bus_request_name(bus, arguments[2], UInt32(DBUS_NAME_FLAG_DO_NOT_QUEUE), &error) == DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER else {
    fail("\(arguments[2]): the name is taken")
}

var table = DBusObjectPathVTable()
table.message_function = { connection, message, context in
    guard let connection, let message, let context,
        dbus_message_get_type(message) == CDBUS_MESSAGE_TYPE_METHOD_CALL,
        let member = dbus_message_get_member(message), strcmp(member, "Write") == 0
    else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
    let store = Unmanaged<FloorStore>.fromOpaque(context).takeUnretainedValue()
    guard let reply = handleWrite(message, store: store), dbus_connection_send(connection, reply, nil) != 0 else {
        fail("out of memory")
    }
    dbus_message_unref(reply)
    return DBUS_HANDLER_RESULT_HANDLED
}
guard dbus_connection_register_object_path(bus, arguments[3], &table, Unmanaged.passRetained(store).toOpaque()) != 0 else {
    fail("\(arguments[3]): cannot register the object path")
}
ProcessMemory.releaseFreedHeap()
ProcessMemory.releaseFilePages()
_ = "ready\n".withCString { write(1, $0, 6) }

var descriptor: Int32 = -1
guard dbus_connection_get_unix_fd(bus, &descriptor) != 0 else { fail("the bus connection has no file descriptor") }
loop: while true {
    while dbus_connection_dispatch(bus) == DBUS_DISPATCH_DATA_REMAINS {}
    var polled = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0), pollfd(fd: 0, events: Int16(POLLIN), revents: 0)]
    if poll(&polled, 2, -1) < 0 && errno != EINTR { fail("poll: \(String(cString: strerror(errno)))") }
    if polled[1].revents != 0 {
        var scratch = [UInt8](repeating: 0, count: 256)
        if read(0, &scratch, scratch.count) <= 0 { break loop }
    }
    if polled[0].revents != 0 && dbus_connection_read_write(bus, 0) == 0 { break loop }
}
