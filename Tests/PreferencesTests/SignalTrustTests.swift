import DBus
import Foundation
import Preferences
import PreferencesModel
import PreferencesProtocol
import PrefsdTestSupport
import Testing

/// The library follows prefsd through the proxy: it believes only signals from the process
/// that owns prefsd's name, and holds one match rule per domain it keeps, no more.
@Suite("The library's signals come through the proxy")
struct SignalTrustTests {
    /// The unique names on the bus of this test process other than `mine`: the library's
    /// connection among them (prefsd's connections, the door's included, are another process's).
    static func otherPeers(_ fixture: ServiceFixture, besides mine: [DBusConnection]) async throws -> [String] {
        let asker = try fixture.connect()
        defer { asker.close() }
        let names = try await asker.call(.methodCall(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "ListNames")).body.first
        let owner = try await asker.call(.methodCall(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "GetNameOwner", body: [.string(PreferencesBus.busName)])).body.first?.stringValue
        guard case .array(_, let values)? = names else { throw FixtureError("ListNames answered \(String(describing: names))") }
        let excluded = Set(mine.map(\.uniqueName) + [asker.uniqueName, owner ?? ""])
        var peers: [String] = []
        for name in values.compactMap(\.stringValue) where name.hasPrefix(":") && !excluded.contains(name) {
            let pid = try? await asker.call(.methodCall(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "GetConnectionUnixProcessID", body: [.string(name)])).body.first
            if pid == .uint32(UInt32(getpid())) { peers.append(name) }
        }
        return peers
    }

    /// The match rules the bus holds for the connections of this process but `mine`
    /// (org.freedesktop.DBus.Debug.Stats).
    static func peerMatchRules(_ fixture: ServiceFixture, besides mine: [DBusConnection]) async throws -> Int {
        let asker = try fixture.connect()
        defer { asker.close() }
        var total = 0
        for peer in try await otherPeers(fixture, besides: mine) {
            let reply = try await asker.call(.methodCall(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus.Debug.Stats",
                member: "GetConnectionStats", body: [.string(peer)]))
            guard case .array(_, let entries)? = reply.body.first else { throw FixtureError("GetConnectionStats answered \(reply.body)") }
            for case .dictEntry(.string("MatchRules"), .variant(.uint32(let count))) in entries { total += Int(count) }
        }
        return total
    }

    @Test("a Changed or ForcedKeysChanged forged by another peer, even sent to the library alone, changes nothing it reads")
    func forgedSignals() async throws {
        let fixture = try await ServiceFixture()
        let client = PreferencesClient(connection: try fixture.connect())
        let intruder = try fixture.connect()
        defer { intruder.close() }
        let domain = "com.example.Forged"
        try await client.write(domain, "Color", .string("blue"))
        let preferences = fixture.preferences(domain)
        let seen = Locked<[PropertyListValue?]>([])
        let observation = preferences.observe("Color") { value in seen.withLock { $0.append(value) } }
        #expect(preferences.string(forKey: "Color") == "blue")   // loaded, and followed

        var changed = DBusMessage.signal(
            path: PreferencesBus.objectPath, interface: PreferencesBus.interface, member: "Changed",
            body: [.string(domain), PropertyListValue.dictionary(["Color": .string("evil")]).dbusValue, .stringArray([]), .stringArray([])])
        var forced = DBusMessage.signal(
            path: PreferencesBus.objectPath, interface: PreferencesBus.interface, member: "ForcedKeysChanged",
            body: [.string(domain), .stringArray(["Color"])])
        try intruder.send(changed)   // broadcast
        for peer in try await Self.otherPeers(fixture, besides: [intruder, client.connection]) {
            changed.destination = peer   // to the library alone: no match rule stands in the way
            forced.destination = peer
            try intruder.send(changed)
            try intruder.send(forced)
        }
        // A round trip to the bus: the forgeries are routed before anything prefsd sends next.
        _ = try await intruder.call(.methodCall(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "GetId"))
        // The sentinel: a real change, sent after the forgeries.
        try await client.write(domain, "Sentinel", .integer(1))
        #expect(await eventually { preferences.integer(forKey: "Sentinel") == 1 })
        #expect(preferences.string(forKey: "Color") == "blue")
        #expect(preferences.objectIsForced(forKey: "Color") == false)
        #expect(seen.withLock { $0 }.isEmpty, "no observer heard of the forged value")
        _ = observation
    }

    @Test("a domain's match rule goes when the domain is dropped, and loading it again adds no second one")
    func matchRules() async throws {
        let fixture = try await ServiceFixture()
        let client = PreferencesClient(connection: try fixture.connect())
        let domain = "com.example.Rules"
        try await client.write(domain, "Key", .string("before"))
        let preferences = fixture.preferences(domain)
        #expect(preferences.string(forKey: "Key") == "before")
        let loaded = try await Self.peerMatchRules(fixture, besides: [client.connection])

        // A restart of prefsd: the library drops what it cached (its own domain and the
        // global one), and their rules with it; only the rule following prefsd's owner stays.
        fixture.stopService()
        try await fixture.startService()
        let restarted = PreferencesClient(connection: try fixture.connect())
        var left = loaded
        for _ in 0..<500 where left != 1 {
            try await Task.sleep(for: .milliseconds(20))
            left = try await Self.peerMatchRules(fixture, besides: [client.connection, restarted.connection])
        }
        #expect(loaded > 1)
        #expect(left == 1, "the unloaded domains' match rules are removed")

        // Read again: loaded again, with one rule as before.
        try await restarted.write(domain, "Key", .string("after"))
        #expect(await eventually { preferences.string(forKey: "Key") == "after" })
        #expect(try await Self.peerMatchRules(fixture, besides: [client.connection, restarted.connection]) == loaded)
    }
}
