import PreferencesClient
import PreferencesInterface
import Testing

/// The protocol's policy, decided once by the engine for every adapter: how a load's two
/// answers pair, what a missing domain means, and which refusals send a batch's keys again
/// one at a time.
@Suite("Client engine: the protocol's policy")
struct ProtocolPolicyTests {
    /// Follows `domain` and returns its load's token.
    private static func startLoad(_ fake: inout FakeTransport, _ domain: ClientDomain) -> UInt64? {
        fake.engine.follow(domain)
        fake.drain()
        return fake.loads.last?.1
    }

    @Test("a persistent domain's load ends once both of its calls are answered, in either order")
    func pairsAnswersInEitherOrder() throws {
        for forcedFirst in [true, false] {
            var fake = FakeTransport()
            let token = try #require(Self.startLoad(&fake, desktop))
            if forcedFirst {
                fake.engine.forcedKeysRead(desktop, token: token, keys: ["locked"], serial: 4)
                fake.drain()
                #expect(fake.engine.phase(of: desktop) == .loading, "one answer of two ends nothing")
                fake.engine.domainRead(desktop, token: token, values: ["k": "v", "locked": "x"], serial: 5, sender: ":1.5")
            } else {
                fake.engine.domainRead(desktop, token: token, values: ["k": "v", "locked": "x"], serial: 5, sender: ":1.5")
                fake.drain()
                #expect(fake.engine.phase(of: desktop) == .loading, "one answer of two ends nothing")
                fake.engine.forcedKeysRead(desktop, token: token, keys: ["locked"], serial: 4)
            }
            fake.drain()
            #expect(fake.engine.phase(of: desktop) == .loaded)
            #expect(fake.engine.value("k", in: desktop) == "v")
            #expect(fake.engine.isForced("locked", in: desktop))
        }
    }

    @Test("a volatile domain's load is its one call")
    func volatileLoadIsOneCall() throws {
        var fake = FakeTransport()
        let volatile = ClientDomain("com.example.Session", volatile: true)
        let token = try #require(Self.startLoad(&fake, volatile))
        fake.engine.domainRead(volatile, token: token, values: ["a": "1"], serial: 2, sender: ":1.5")
        fake.drain()
        #expect(fake.engine.phase(of: volatile) == .loaded)
        #expect(fake.engine.value("a", in: volatile) == "1")
    }

    @Test("a domain that does not exist loads as a domain with no keys; any other refusal fails the load")
    func notFoundIsEmpty() throws {
        var fake = FakeTransport()
        let token = try #require(Self.startLoad(&fake, desktop))
        let notFound = PreferencesFailure(errorName: PreferencesErrorName.notFound.busName)
        fake.engine.loadCallFailed(desktop, token: token, part: .values, failure: notFound, reason: "no such domain", sender: ":1.5")
        fake.engine.loadCallFailed(desktop, token: token, part: .forcedKeys, failure: notFound, reason: "no such domain")
        fake.drain()
        #expect(fake.engine.phase(of: desktop) == .loaded)
        #expect(fake.engine.entries(of: desktop).isEmpty)
        // The answer told who prefsd is: its signals are taken from then on.
        fake.engine.changed(desktop, changed: ["k": "v"], removed: [], serial: 2, sender: ":1.5")
        #expect(fake.engine.value("k", in: desktop) == "v")

        var other = FakeTransport()
        let second = try #require(Self.startLoad(&other, desktop))
        other.engine.domainRead(desktop, token: second, values: ["k": "v"], serial: 3, sender: ":1.5")
        let denied = PreferencesFailure(errorName: "org.freedesktop.DBus.Error.AccessDenied")
        other.engine.loadCallFailed(desktop, token: second, part: .forcedKeys, failure: denied, reason: "not yours")
        other.drain()
        #expect(other.engine.phase(of: desktop) == .unavailable)
    }

    /// Writes two keys in one batch, has prefsd refuse the batch with `errorName` (and take
    /// whatever is sent after it), and returns how many calls went out in all.
    private static func refuseBatch(with errorName: String) -> Int {
        var fake = FakeTransport()
        fake.load(desktop, [:], sender: ":1.5")
        _ = fake.engine.write([(key: "a", value: "1"), (key: "b", value: "2")], in: desktop)
        fake.engine.flushAll()
        fake.drain()
        guard let token = fake.applies.first?.token else { return 0 }
        fake.engine.writeFailed(desktop, token: token, failure: PreferencesFailure(errorName: errorName), reason: errorName)
        fake.drain()
        var answered = 1
        while true {
            fake.engine.flushAll()
            fake.drain()
            guard fake.applies.count > answered else { return answered }
            fake.engine.writeAnswered(desktop, token: fake.applies[answered].token, serial: UInt32(answered + 2), sender: ":1.5")
            answered += 1
        }
    }

    @Test(
        "a batch refused for one of its keys goes again key by key; a refusal of every key alike does not",
        arguments: [
            (PreferencesErrorName.invalidName.busName, true),
            (PreferencesErrorName.invalidValue.busName, true),
            (PreferencesErrorName.forced.busName, true),
            (PreferencesErrorName.quotaExceeded.busName, true),
            ("org.freedesktop.DBus.Error.InvalidArgs", true),
            ("org.freedesktop.DBus.Error.LimitsExceeded", true),
            (PreferencesErrorName.storageFailed.busName, false),
            (PreferencesErrorName.accessDenied.busName, false),
            (PreferencesErrorName.notFound.busName, false),
            ("org.freedesktop.DBus.Error.AccessDenied", false),
            ("org.freedesktop.DBus.Error.NoReply", false),
            ("org.freedesktop.DBus.Error.ServiceUnknown", false),
            ("com.example.Unknown", false),
        ])
    func retryPolicy(errorName: String, retries: Bool) {
        #expect(Self.refuseBatch(with: errorName) == (retries ? 3 : 1), "\(errorName)")
    }

    @Test("the one table reads each error name the protocol knows")
    func errorTable() {
        for name in PreferencesErrorName.allCases {
            #expect(PreferencesFailure(errorName: name.busName) == .refused(name))
        }
        #expect(PreferencesFailure(errorName: "org.freedesktop.DBus.Error.AccessDenied") == .refused(.accessDenied))
        #expect(PreferencesFailure(errorName: "org.freedesktop.DBus.Error.InvalidArgs") == .refused(.invalidArguments))
        #expect(PreferencesFailure(errorName: "org.freedesktop.DBus.Error.Spawn.ChildExited") == .unavailable(.couldNotStart))
        #expect(PreferencesFailure(errorName: "org.freedesktop.DBus.Error.NameHasNoOwner") == .unavailable(.notRunning))
        #expect(PreferencesFailure(errorName: "org.freedesktop.DBus.Error.Timeout") == .unavailable(.noAnswer))
        #expect(PreferencesFailure(errorName: "org.freedesktop.DBus.Error.NoServer") == .unavailable(.disconnected))
        // A refusal a newer prefsd adds is still a refusal, named as it was answered.
        let newer = PreferencesErrorName.prefix + "SomethingNew"
        #expect(PreferencesFailure(errorName: newer) == .refused(PreferencesErrorName(rawValue: newer)))
        #expect(PreferencesFailure(errorName: "com.example.Error.Other") == .other)
    }
}
