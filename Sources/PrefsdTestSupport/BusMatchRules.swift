import DBus

/// How many match rules the bus holds for the connection named `uniqueName`, asked through
/// `connection` without changing them (`org.freedesktop.DBus.Debug.Stats`, which the
/// dbus-daemon of the tests' private buses answers).
public func busMatchRules(of uniqueName: String, asking connection: DBusConnection) async throws -> Int {
    let reply = try await connection.call(
        .methodCall(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus.Debug.Stats",
            member: "GetConnectionStats", body: [.string(uniqueName)]))
    guard case .array(_, let entries)? = reply.body.first else { throw FixtureError("GetConnectionStats answered \(reply.body)") }
    for case .dictEntry(.string("MatchRules"), .variant(.uint32(let count))) in entries { return Int(count) }
    throw FixtureError("GetConnectionStats gave no MatchRules: \(entries)")
}
