/// Methods of the bus itself (`org.freedesktop.DBus`).
extension DBusConnection {
    /// Calls one method of the bus driver.
    private func callBus(_ member: String, _ body: [DBusValue]) async throws(DBusError) -> DBusMessage {
        try await call(
            .methodCall(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus", member: member, body: body))
    }

    /// `org.freedesktop.DBus.RequestName`; returns the reply code (1 primary owner, 2 in queue,
    /// 3 exists, 4 already owner). Flags: 1 allow replacement, 2 replace existing, 4 do not queue.
    public func requestName(_ name: String, flags: UInt32) async throws(DBusError) -> UInt32 {
        let reply = try await callBus("RequestName", [.string(name), .uint32(flags)])
        guard case let .uint32(code)? = reply.body.first else {
            throw .invalidArguments("RequestName answered with signature \"\(reply.signature)\" instead of \"u\"")
        }
        return code
    }

    /// `org.freedesktop.DBus.ReleaseName`; returns the reply code (1 released, 2 non-existent,
    /// 3 not owner).
    public func releaseName(_ name: String) async throws(DBusError) -> UInt32 {
        let reply = try await callBus("ReleaseName", [.string(name)])
        guard case let .uint32(code)? = reply.body.first else {
            throw .invalidArguments("ReleaseName answered with signature \"\(reply.signature)\" instead of \"u\"")
        }
        return code
    }

    /// `org.freedesktop.DBus.AddMatch`: the bus starts routing messages matching `rule` here.
    public func addMatch(_ rule: String) async throws(DBusError) {
        _ = try await callBus("AddMatch", [.string(rule)])
    }

    /// `org.freedesktop.DBus.RemoveMatch`.
    public func removeMatch(_ rule: String) async throws(DBusError) {
        _ = try await callBus("RemoveMatch", [.string(rule)])
    }
}
