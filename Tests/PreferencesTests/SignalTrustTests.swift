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
        let names = try await asker.call(
            .methodCall(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "ListNames")
        ).body.first
        let owner = try await asker.call(
            .methodCall(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "GetNameOwner", body: [.string(PreferencesBus.busName)])
        ).body.first?.stringValue
        guard case .array(_, let values)? = names else { throw FixtureError("ListNames answered \(String(describing: names))") }
        let excluded = Set(mine.map(\.uniqueName) + [asker.uniqueName, owner ?? ""])
        var peers: [String] = []
        for name in values.compactMap(\.stringValue) where name.hasPrefix(":") && !excluded.contains(name) {
            let pid = try? await asker.call(
                .methodCall(
                    destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                    member: "GetConnectionUnixProcessID", body: [.string(name)])
            ).body.first
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
            total += try await busMatchRules(of: peer, asking: asker)
        }
        return total
    }

    @Test("a Changed or ForcedKeysChanged forged by another peer, even sent to the library alone, changes nothing it reads")
    func forgedSignals() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        let intruder = try fixture.connect()
        defer { intruder.close() }
        let domain = "com.example.Forged"
        try await client.write(domain, "Color", .string("blue"))
        let preferences = fixture.preferences(domain)
        let seen = Locked<[PropertyListValue?]>([])
        let observation = preferences.observe("Color") { value in seen.withLock { $0.append(value) } }
        #expect(preferences.string(forKey: "Color") == "blue")  // loaded, and followed

        var changed = DBusMessage.signal(
            path: PreferencesBus.objectPath, interface: PreferencesBus.interface, member: "Changed",
            body: [.string(domain), PropertyListValue.dictionary(["Color": .string("evil")]).dbusValue, .stringArray([]), .stringArray([])])
        var forced = DBusMessage.signal(
            path: PreferencesBus.objectPath, interface: PreferencesBus.interface, member: "ForcedKeysChanged",
            body: [.string(domain), .stringArray(["Color"])])
        try intruder.send(changed)  // broadcast
        for peer in try await Self.otherPeers(fixture, besides: [intruder, client.connection]) {
            changed.destination = peer  // to the library alone: no match rule stands in the way
            forced.destination = peer
            try intruder.send(changed)
            try intruder.send(forced)
        }
        // A round trip to the bus: the forgeries are routed before anything prefsd sends next.
        _ = try await intruder.call(
            .methodCall(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "GetId"))
        // The sentinel: a real change, sent after the forgeries.
        try await client.write(domain, "Sentinel", .integer(1))
        #expect(await eventually { preferences.integer(forKey: "Sentinel") == 1 })
        #expect(preferences.string(forKey: "Color") == "blue")
        #expect(preferences.objectIsForced(forKey: "Color") == false)
        #expect(seen.withLock { $0 }.isEmpty, "no observer heard of the forged value")
        _ = observation
    }

    @Test("across a restart of prefsd the library keeps following its domains: observers hear later changes unasked, with no second match rule")
    func matchRules() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        let domain = "com.example.Rules"
        try await client.write(domain, "Key", .string("before"))
        let preferences = fixture.preferences(domain)
        let seen = Locked<[PropertyListValue?]>([])
        let observation = preferences.observe("Key") { value in seen.withLock { $0.append(value) } }
        #expect(preferences.string(forKey: "Key") == "before")
        let loaded = try await Self.peerMatchRules(fixture, besides: [client.connection])
        #expect(loaded > 1, "one rule per domain followed, and the one following prefsd's owner")

        // A restart of prefsd: the library loads its domains again from the new prefsd and
        // keeps their subscriptions, so a change made then reaches the observer though
        // nothing in this process read the key meanwhile.
        fixture.stopService()
        try await fixture.startService()
        let restarted = ServiceClient(connection: try fixture.connect())
        try await restarted.write(domain, "Key", .string("after"))
        #expect(await eventually { seen.withLock { $0 }.last == .string("after") }, "\(seen.withLock { $0 })")
        #expect(preferences.string(forKey: "Key") == "after")
        #expect(try await Self.peerMatchRules(fixture, besides: [client.connection, restarted.connection]) == loaded)
        _ = observation
    }
}
