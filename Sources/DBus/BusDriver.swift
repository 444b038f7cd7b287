/// The bus driver, `org.freedesktop.DBus`: its names, and one call for each of its methods
/// that a program of this package uses (the message here, the typed calls on
/// ``DBusConnection``, in completion and async forms).
///
/// The replies are checked here once: a reply of the wrong signature fails with
/// ``DBusError/invalidArguments(_:)`` naming the method.
public enum BusDriver {
    /// The driver's bus name (and the sender of its signals).
    public static let name = "org.freedesktop.DBus"
    /// The driver's object path.
    public static let path = "/org/freedesktop/DBus"
    /// The driver's interface.
    public static let interface = "org.freedesktop.DBus"
    /// The signal sent when a bus name changes owner: (name, old owner, new owner).
    public static let nameOwnerChanged = "NameOwnerChanged"
    /// The signal sent to a connection that lost a name it owned: (name).
    public static let nameLost = "NameLost"

    /// The match rule selecting the `NameOwnerChanged` signals about `busName`.
    public static func ownerChangedRule(_ busName: String) -> String {
        "type='signal',sender='\(name)',interface='\(interface)',member='\(nameOwnerChanged)',arg0='\(busName)'"
    }

    /// The name, old owner and new owner that `message` reports when it is the driver's
    /// `NameOwnerChanged` signal (an empty owner is none), else `nil`.
    public static func ownerChange(_ message: DBusMessage) -> (name: String, oldOwner: String, newOwner: String)? {
        guard message.kind == .signal, message.sender == name, message.member == nameOwnerChanged,
            message.body.count == 3, case .string(let changed) = message.body[0],
            case .string(let old) = message.body[1], case .string(let new) = message.body[2]
        else { return nil }
        return (changed, old, new)
    }

    /// `AddMatch(rule)`: the bus starts routing the messages `rule` matches to the caller.
    public static func addMatch(_ rule: String) -> DBusMessage { call("AddMatch", [.string(rule)]) }
    /// `RemoveMatch(rule)`: undoes one `AddMatch` of the same rule.
    public static func removeMatch(_ rule: String) -> DBusMessage { call("RemoveMatch", [.string(rule)]) }
    /// `GetNameOwner(name)`: the unique name owning `name`; fails with
    /// `org.freedesktop.DBus.Error.NameHasNoOwner` when nobody owns it.
    public static func getNameOwner(_ busName: String) -> DBusMessage { call("GetNameOwner", [.string(busName)]) }
    /// `NameHasOwner(name)`: whether anybody owns `name`.
    public static func nameHasOwner(_ busName: String) -> DBusMessage { call("NameHasOwner", [.string(busName)]) }
    /// `GetConnectionUnixProcessID(name)`: the process ID of the connection owning `name`.
    public static func getConnectionUnixProcessID(_ busName: String) -> DBusMessage {
        call("GetConnectionUnixProcessID", [.string(busName)])
    }
    /// `RequestName(name, flags)`. Flags: 1 allow replacement, 2 replace existing, 4 do not queue.
    public static func requestName(_ busName: String, flags: UInt32) -> DBusMessage {
        call("RequestName", [.string(busName), .uint32(flags)])
    }
    /// `ReleaseName(name)`.
    public static func releaseName(_ busName: String) -> DBusMessage { call("ReleaseName", [.string(busName)]) }

    /// A call of the driver's method `member`.
    static func call(_ member: String, _ body: [DBusValue]) -> DBusMessage {
        .methodCall(destination: name, path: path, interface: interface, member: member, body: body)
    }

    /// The one string a reply of `member` carries.
    static func string(_ reply: DBusMessage, of member: String) throws(DBusError) -> String {
        guard case .string(let value)? = reply.body.first, reply.body.count == 1 else {
            throw .invalidArguments("\(member) answered with signature \"\(reply.signature)\" instead of \"s\"")
        }
        return value
    }

    /// The one `u` a reply of `member` carries.
    static func uint32(_ reply: DBusMessage, of member: String) throws(DBusError) -> UInt32 {
        guard case .uint32(let value)? = reply.body.first, reply.body.count == 1 else {
            throw .invalidArguments("\(member) answered with signature \"\(reply.signature)\" instead of \"u\"")
        }
        return value
    }

    /// The one `b` a reply of `member` carries.
    static func boolean(_ reply: DBusMessage, of member: String) throws(DBusError) -> Bool {
        guard case .boolean(let value)? = reply.body.first, reply.body.count == 1 else {
            throw .invalidArguments("\(member) answered with signature \"\(reply.signature)\" instead of \"b\"")
        }
        return value
    }
}

/// The bus driver's methods as typed calls: each in a completion form (the completion runs
/// once, on the connection's queue) and an async form.
extension DBusConnection {
    /// Calls `message` and decodes its reply with `decode`.
    private func driverCall<Value: Sendable>(
        _ message: DBusMessage, timeout: Duration = .seconds(25),
        decode: @escaping @Sendable (DBusMessage) throws(DBusError) -> Value,
        completion: @escaping @Sendable (Result<Value, DBusError>) -> Void
    ) {
        call(message, timeout: timeout) { result in
            completion(
                result.flatMap { reply in
                    do throws(DBusError) { return .success(try decode(reply)) } catch { return .failure(error) }
                })
        }
    }

    /// `AddMatch`: the bus starts routing messages matching `rule` here.
    public func addMatch(_ rule: String, completion: @escaping @Sendable (Result<Void, DBusError>) -> Void) {
        driverCall(BusDriver.addMatch(rule), decode: { _ in }, completion: completion)
    }

    /// `AddMatch`: the bus starts routing messages matching `rule` here.
    public func addMatch(_ rule: String) async throws(DBusError) {
        _ = try await call(BusDriver.addMatch(rule))
    }

    /// `RemoveMatch`: undoes one ``addMatch(_:)`` of the same rule.
    public func removeMatch(_ rule: String, completion: @escaping @Sendable (Result<Void, DBusError>) -> Void) {
        driverCall(BusDriver.removeMatch(rule), decode: { _ in }, completion: completion)
    }

    /// `RemoveMatch`: undoes one ``addMatch(_:)`` of the same rule.
    public func removeMatch(_ rule: String) async throws(DBusError) {
        _ = try await call(BusDriver.removeMatch(rule))
    }

    /// `GetNameOwner`: the unique name owning `name` (fails with
    /// `org.freedesktop.DBus.Error.NameHasNoOwner` when nobody does).
    public func getNameOwner(_ name: String, completion: @escaping @Sendable (Result<String, DBusError>) -> Void) {
        driverCall(
            BusDriver.getNameOwner(name),
            decode: { reply throws(DBusError) in
                try BusDriver.string(reply, of: "GetNameOwner")
            }, completion: completion)
    }

    /// `GetNameOwner`: the unique name owning `name` (throws
    /// `org.freedesktop.DBus.Error.NameHasNoOwner` when nobody does).
    public func getNameOwner(_ name: String) async throws(DBusError) -> String {
        try BusDriver.string(try await call(BusDriver.getNameOwner(name)), of: "GetNameOwner")
    }

    /// `NameHasOwner`: whether anybody owns `name`.
    public func nameHasOwner(_ name: String, completion: @escaping @Sendable (Result<Bool, DBusError>) -> Void) {
        driverCall(
            BusDriver.nameHasOwner(name),
            decode: { reply throws(DBusError) in
                try BusDriver.boolean(reply, of: "NameHasOwner")
            }, completion: completion)
    }

    /// `NameHasOwner`: whether anybody owns `name`.
    public func nameHasOwner(_ name: String) async throws(DBusError) -> Bool {
        try BusDriver.boolean(try await call(BusDriver.nameHasOwner(name)), of: "NameHasOwner")
    }

    /// `GetConnectionUnixProcessID`: the process ID of the connection owning `name`.
    public func getConnectionUnixProcessID(
        _ name: String, timeout: Duration = .seconds(25),
        completion: @escaping @Sendable (Result<UInt32, DBusError>) -> Void
    ) {
        driverCall(
            BusDriver.getConnectionUnixProcessID(name), timeout: timeout,
            decode: { reply throws(DBusError) in
                try BusDriver.uint32(reply, of: "GetConnectionUnixProcessID")
            }, completion: completion)
    }

    /// `GetConnectionUnixProcessID`: the process ID of the connection owning `name`.
    public func getConnectionUnixProcessID(_ name: String) async throws(DBusError) -> UInt32 {
        try BusDriver.uint32(try await call(BusDriver.getConnectionUnixProcessID(name)), of: "GetConnectionUnixProcessID")
    }

    /// `RequestName`; returns the reply code (1 primary owner, 2 in queue, 3 exists,
    /// 4 already owner). Flags: 1 allow replacement, 2 replace existing, 4 do not queue.
    public func requestName(_ name: String, flags: UInt32) async throws(DBusError) -> UInt32 {
        try BusDriver.uint32(try await call(BusDriver.requestName(name, flags: flags)), of: "RequestName")
    }

    /// `ReleaseName`; returns the reply code (1 released, 2 non-existent, 3 not owner).
    public func releaseName(_ name: String) async throws(DBusError) -> UInt32 {
        try BusDriver.uint32(try await call(BusDriver.releaseName(name)), of: "ReleaseName")
    }
}
