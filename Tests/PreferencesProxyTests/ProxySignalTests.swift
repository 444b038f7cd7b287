import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy
import PrefsdTestSupport
import Testing

@Suite("Proxy signals", .timeLimit(.minutes(2)))
struct ProxySignalTests {
    /// The next event of `iterator` (the suite's time limit bounds a stalled machine).
    /// Changes come with their signal's serial set to 0, to compare them with expected ones.
    static func next(_ iterator: inout AsyncStream<PreferencesEvent>.Iterator) async throws -> PreferencesEvent {
        guard let event = await iterator.next() else { throw FixtureError("the event stream ended") }
        switch event {
        case .changed(var change):
            change.serial = 0
            return .changed(change)
        case .volatileChanged(var change):
            change.serial = 0
            return .volatileChanged(change)
        default:
            return event
        }
    }

    @Test("changes of a domain arrive complete and in order; other domains are filtered out")
    func changes() async throws {
        let fixture = try await ServiceFixture()
        let proxy = PreferencesProxy(connection: try fixture.connect())
        let writer = PreferencesProxy(connection: try fixture.connect())
        defer { proxy.close(); writer.close() }
        var events = try await proxy.events(in: ["com.example.Watched"]).makeAsyncIterator()

        try await writer.write("com.example.Other", "a", .integer(1))
        try await writer.write("com.example.Watched", "a", .integer(1))
        try await writer.apply("com.example.Watched", set: ["b": .string("x")], remove: ["a"])
        #expect(try await Self.next(&events) == .changed(Self.change("com.example.Watched", ["a": .integer(1)], [])))
        #expect(try await Self.next(&events) == .changed(Self.change("com.example.Watched", ["b": .string("x")], ["a"])))
    }

    @Test("a signal of prefsd's shape from another peer, broadcast or sent to the client alone, is dropped")
    func spoofedSignals() async throws {
        let fixture = try await ServiceFixture()
        let proxy = PreferencesProxy(connection: try fixture.connect())
        let writer = PreferencesProxy(connection: try fixture.connect())
        let intruder = try fixture.connect()
        defer { proxy.close(); writer.close(); intruder.close() }
        var events = try await proxy.events(in: ["com.example.Watched"]).makeAsyncIterator()

        let body: [DBusValue] = [
            .string("com.example.Watched"), PropertyListValue.dictionary(["Proxy": .string("evil")]).dbusValue,
            .stringArray([]), .stringArray([]),
        ]
        var broadcast = DBusMessage.signal(path: PreferencesBus.objectPath, interface: PreferencesBus.interface, member: "Changed", body: body)
        try intruder.send(broadcast)
        broadcast.destination = proxy.connection.uniqueName  // unicast: bypasses the match rule's sender=
        try intruder.send(broadcast)
        var forced = DBusMessage.signal(
            path: PreferencesBus.objectPath, interface: PreferencesBus.interface, member: "ForcedKeysChanged",
            body: [.string("com.example.Watched"), .stringArray(["Proxy"])])
        forced.destination = proxy.connection.uniqueName
        try intruder.send(forced)
        intruder.flush()
        // The sentinel: a real change, sent after the forgeries on the same bus.
        try await writer.write("com.example.Watched", "Sentinel", .integer(1))
        #expect(try await Self.next(&events) == .changed(Self.change("com.example.Watched", ["Sentinel": .integer(1)], [])))
    }

    @Test("a domain's match rule is added once and removed when its last subscriber goes")
    func matchRules() async throws {
        let fixture = try await ServiceFixture()
        let proxy = PreferencesProxy(connection: try fixture.connect())
        defer { proxy.close() }
        let ruleA = PreferencesBus.domainMatchRule(domain: "com.example.A")
        let ruleB = PreferencesBus.domainMatchRule(domain: "com.example.B")
        var first: AsyncStream<PreferencesEvent>? = try await proxy.events(in: ["com.example.A"])
        let second = try await proxy.observe(["com.example.A", "com.example.B"]) { _ in }
        #expect(proxy.matchRules == [ruleA: 2, ruleB: 1])
        second.cancel()
        #expect(proxy.matchRules == [ruleA: 1])
        // The bus holds no rule for B any more (the proxy's RemoveMatch went out first on
        // the same connection), and exactly one for A.
        #expect(try await Self.busRemoves(ruleB, on: proxy.connection) == false)
        #expect(try await Self.busRemoves(ruleA, on: proxy.connection) == true)
        #expect(try await Self.busRemoves(ruleA, on: proxy.connection) == false)
        try await proxy.connection.addMatch(ruleA)  // as it was, for the stream's own removal
        #expect(first != nil && proxy.matchRules == [ruleA: 1], "the stream holds its subscription while it lives")
        let rulesOnBus = try await busMatchRules(of: proxy.connection.uniqueName, asking: proxy.connection)
        first = nil  // dropping the stream ends its subscription
        try await Self.eventually { proxy.matchRules.isEmpty }
        // The stream ends on another thread, which lets go of the count before it sends
        // RemoveMatch: the bus drops the rule soon after, not at once.
        try await Self.eventually { try await busMatchRules(of: proxy.connection.uniqueName, asking: proxy.connection) == rulesOnBus - 1 }
        #expect(try await Self.busRemoves(ruleA, on: proxy.connection) == false)
    }

    /// Whether the bus had `rule` for `connection` (and removed it now).
    static func busRemoves(_ rule: String, on connection: DBusConnection) async throws -> Bool {
        do {
            try await connection.removeMatch(rule)
            return true
        } catch let error where error.isRemote(named: "org.freedesktop.DBus.Error.MatchRuleNotFound") {
            return false
        }
    }

    @Test("a restart of prefsd is reported as a new owner; a change after it still arrives")
    func restart() async throws {
        let fixture = try await ServiceFixture()
        let proxy = PreferencesProxy(connection: try fixture.connect())
        defer { proxy.close() }
        var events = try await proxy.events(in: ["com.example.Restart"]).makeAsyncIterator()
        // A subscription to no domain at all hears of the owner only.
        var ownerOnly = try await proxy.events(in: []).makeAsyncIterator()
        #expect(proxy.matchRules.count == 1)
        fixture.stopService()
        guard case .ownerChanged(let previous?, nil) = try await Self.next(&events) else {
            Issue.record("no owner change to none")
            return
        }
        try await fixture.startService()
        guard case .ownerChanged(nil, let current?) = try await Self.next(&events) else {
            Issue.record("no owner change to the new prefsd")
            return
        }
        #expect(previous != current)
        #expect(try await Self.next(&ownerOnly) == .ownerChanged(previous: previous, current: nil))
        #expect(try await Self.next(&ownerOnly) == .ownerChanged(previous: nil, current: current))
        try await proxy.write("com.example.Restart", "k", .integer(2))
        #expect(try await Self.next(&events) == .changed(Self.change("com.example.Restart", ["k": .integer(2)], [])))
    }

    @Test("invalidated keys are re-read with Read, a whole invalidated domain with ReadDomain, volatile ones with ReadVolatileDomain")
    func invalidated() async throws {
        let fixture = try await ServiceFixture()
        let proxy = PreferencesProxy(connection: try fixture.connect())
        defer { proxy.close() }
        // dbus-monitor shows which methods the proxy calls (the private bus allows monitors).
        let monitor = try CallMonitor(bus: fixture.bus, sender: proxy.connection.uniqueName)
        defer { monitor.stop() }
        try await monitor.waitUntilListening(proxy)
        var events = try await proxy.events(in: ["com.example.Big"]).makeAsyncIterator()
        var raw = try await proxy.events(in: ["com.example.Big"], resolving: false).makeAsyncIterator()
        // 40 values of 200 bytes: more than the 4 KiB a signal carries.
        let values = Dictionary(uniqueKeysWithValues: (0..<40).map { ("k\($0)", PropertyListValue.string(String(repeating: "v", count: 200))) })
        try await proxy.apply("com.example.Big", set: values)
        guard case .changed(let bounded) = try await Self.next(&raw), case .changed(let change) = try await Self.next(&events) else {
            Issue.record("no change")
            return
        }
        #expect(!bounded.invalidated.isEmpty && bounded.changed.count < values.count)
        #expect(change.changed == values && change.removed.isEmpty && !change.isWholeDomain)
        #expect(change.invalidated == bounded.invalidated)
        let reads = try await monitor.reads(until: proxy, of: "com.example.Big")
        #expect(reads == Array(repeating: "Read", count: bounded.invalidated.count), "each invalidated key is re-read with Read: \(reads)")

        // 300 key names of 60 bytes: even the names pass 4 KiB.
        let many = Dictionary(uniqueKeysWithValues: (0..<300).map { (String(format: "%060d", $0), PropertyListValue.integer(Int64($0))) })
        try await proxy.replaceDomain("com.example.Big", many)
        guard case .changed(let whole) = try await Self.next(&events), case .changed(let wholeRaw) = try await Self.next(&raw) else {
            Issue.record("no change")
            return
        }
        #expect(wholeRaw.invalidated == [""])
        #expect(whole.isWholeDomain && whole.changed == many && whole.removed.isEmpty)
        let wholeReads = try await monitor.reads(until: proxy, of: "com.example.Big")
        #expect(wholeReads == ["ReadDomain"], "a whole invalidated domain is re-read with one ReadDomain: \(wholeReads)")

        // A volatile domain: no Read of one key, so the domain is read whole.
        var volatileEvents = try await proxy.events(in: ["com.example.Session"]).makeAsyncIterator()
        try await proxy.setVolatileDomain("com.example.Session", values)
        guard case .volatileChanged(let session) = try await Self.next(&volatileEvents) else {
            Issue.record("no volatile change")
            return
        }
        #expect(session.changed == values && !session.invalidated.isEmpty)
        let volatileReads = try await monitor.reads(until: proxy, of: "com.example.Session")
        #expect(volatileReads == ["ReadVolatileDomain"], "a volatile domain is re-read with ReadVolatileDomain: \(volatileReads)")
    }

    @Test("an administrator's managed file comes as ForcedKeysChanged, then Changed; update refuses a forced key as Forced")
    func forcedKeys() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-managed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fixture = try await ServiceFixture(arguments: ["--managed-dir", directory.path, "--allow-unowned-managed-dir"])
        let proxy = PreferencesProxy(connection: try fixture.connect())
        defer { proxy.close() }
        var events = try await proxy.events(in: ["com.example.Lab"]).makeAsyncIterator()
        // prefsd owns its name before it reads the managed directory; an answer means it has.
        #expect(try await proxy.domains() == [])
        let temporary = directory.appendingPathComponent(".lab.tmp")
        try PropertyListValue.dictionary(["Locked": .boolean(true)]).xmlPropertyListData().write(to: temporary)
        try FileManager.default.moveItem(at: temporary, to: directory.appendingPathComponent("com.example.Lab.plist"))
        guard case .forcedKeysChanged("com.example.Lab", ["Locked"], _) = try await Self.next(&events) else {
            Issue.record("no ForcedKeysChanged first")
            return
        }
        #expect(try await Self.next(&events) == .changed(Self.change("com.example.Lab", ["Locked": .boolean(true)], [])))
        do {
            try await proxy.update("com.example.Lab", keys: ["Locked"]) { _ in PreferencesBatch(set: ["Locked": .boolean(false)]) }
            Issue.record("a forced key was updated")
        } catch let error as PreferencesProxyError {
            guard case .refused(.forced) = error else { Issue.record("\(error)"); return }
        }
    }

    @Test("a blocking subscription from a plain thread gets its domain's changes through the callback")
    func blockingSubscription() async throws {
        let fixture = try await ServiceFixture()
        let proxy = PreferencesProxy(connection: try fixture.connect())
        defer { proxy.close() }
        let (events, continuation) = AsyncStream<PreferencesEvent>.makeStream()
        let subscription = try await withDeadline(.seconds(30), "observeBlocking to return") { (made: BoundedContinuation<PreferencesSubscription>) in
            DispatchQueue.global().async {
                made.resume(with: Result { try proxy.observeBlocking(["com.example.Blocking"]) { continuation.yield($0) } })
            }
        }
        defer { subscription.cancel() }
        try proxy.performBlocking(PreferencesCall.write("com.example.Blocking", "k", .integer(7)))
        var iterator = events.makeAsyncIterator()
        #expect(try await Self.next(&iterator) == .changed(Self.change("com.example.Blocking", ["k": .integer(7)], [])))
    }

    @Test("startObserving, then a read: once the read is answered the subscription is in force, and a change committed after it is delivered")
    func subscribeAndReadTogether() async throws {
        let fixture = try await ServiceFixture()
        let proxy = PreferencesProxy(connection: try fixture.connect())
        let writer = PreferencesProxy(connection: try fixture.connect())
        defer { proxy.close(); writer.close() }
        try await writer.write("com.example.Together", "k", .integer(1))
        let (events, continuation) = AsyncStream<PreferencesEvent>.makeStream()
        let subscription = try proxy.startObserving(["com.example.Together"]) { continuation.yield($0) }
        defer { subscription.cancel() }
        // Without waiting, as a cache loading in one round trip sends its reads.
        let answer = try await withDeadline(.seconds(30), "ReadDomain's answer") {
            (done: BoundedContinuation<Result<(value: [String: PropertyListValue], serial: UInt32), PreferencesProxyError>>) in
            proxy.answer(PreferencesCall.readDomain("com.example.Together")) { done.resume(returning: $0) }
        }.get()
        #expect(answer.value == ["k": .integer(1)])
        try subscription.confirmBlocking()
        #expect(proxy.matchRules == [PreferencesBus.domainMatchRule(domain: "com.example.Together"): 1])
        try await writer.write("com.example.Together", "k", .integer(2))
        var iterator = events.makeAsyncIterator()
        guard case .changed(let change)? = await iterator.next() else { throw FixtureError("no change delivered") }
        #expect(change.changed == ["k": .integer(2)])
        #expect(change.serial > answer.serial)

        #expect(throws: PreferencesProxyError.self) { try proxy.startObserving(["not a domain"]) { _ in } }
    }

    @Test("catchUp returns once every change committed before it has been delivered, re-reads included")
    func catchUp() async throws {
        let fixture = try await ServiceFixture()
        let proxy = PreferencesProxy(connection: try fixture.connect())
        let writer = PreferencesProxy(connection: try fixture.connect())
        defer { proxy.close(); writer.close() }
        let seen = Locked<[DomainChange]>([])
        let subscription = try await proxy.observe(["com.example.Burst"]) { event in
            if case .changed(let change) = event { seen.withLock { $0.append(change) } }
        }
        defer { subscription.cancel() }
        for index in 0..<40 {
            try await writer.write("com.example.Burst", "k\(index % 4)", .integer(Int64(index)))
        }
        // The last one is left out of its signal (over 4 KiB): delivered only once re-read.
        let big = PropertyListValue.string(String(repeating: "b", count: 6000))
        try await writer.write("com.example.Burst", "big", big)
        await proxy.catchUp()
        let changes = seen.withLock { $0 }
        #expect(changes.count == 41)
        #expect(changes.last?.changed == ["big": big])
        #expect(changes.dropLast().enumerated().allSatisfy { $0.element.changed == ["k\($0.offset % 4)": .integer(Int64($0.offset))] })
    }

    @Test("the bus going away ends the streams with .disconnected, and calls then say the service is unavailable")
    func busGone() async throws {
        let fixture = try await ServiceFixture()
        let proxy = PreferencesProxy(connection: try fixture.connect())
        defer { proxy.close() }
        var events = try await proxy.events(in: ["com.example.Gone"]).makeAsyncIterator()
        fixture.killService()
        guard case .ownerChanged(_?, nil) = try await Self.next(&events) else {
            Issue.record("no owner change when prefsd died")
            return
        }
        fixture.bus.stop()
        #expect(try await Self.next(&events) == .disconnected)
        #expect(await events.next() == nil)
        do {
            _ = try await proxy.domains()
            Issue.record("a call succeeded without a bus")
        } catch {
            #expect(error.isServiceUnavailable, "\(error)")
        }
    }

    static func change(_ domain: String, _ changed: [String: PropertyListValue], _ removed: [String]) -> DomainChange {
        DomainChange(domain: domain, changed: changed, removed: removed)
    }

    /// Polls `condition` until it holds (the shared ``BusTestSupport/eventually(timeout:_:)``),
    /// and throws when it did not within its bound.
    static func eventually(_ condition: () async throws -> Bool) async throws {
        guard try await BusTestSupport.eventually(condition) else { throw FixtureError("the condition did not hold within 20 s") }
    }
}
