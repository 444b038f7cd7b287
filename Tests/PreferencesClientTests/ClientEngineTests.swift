import PreferencesClient
import PreferencesInterface
import Testing

let desktop = ClientDomain("org.gnome.desktop")

@Suite("Client engine: loading, ordering, owner changes")
struct ClientEngineLoadingTests {
    @Test("the first read of a domain asks for its subscription and its load together: one round trip")
    func oneRoundTrip() {
        var fake = FakeTransport()
        let result1 = fake.engine.follow(desktop) == .loading
        #expect(result1)
        let actions = fake.drain()
        #expect(actions.count == 2)
        guard case .subscribe(desktop)? = actions.first, case .load(desktop, let token)? = actions.last else {
            Issue.record("expected subscribe then load, got \(actions.count) actions")
            return
        }
        #expect(fake.engine.value("interface/color-scheme", in: desktop) == nil)
        fake.engine.loadAnswered(desktop, token: token, values: ["interface/color-scheme": "dark"], forced: [], serial: 3, sender: ":1.5")
        let after = fake.drain()
        #expect(fake.engine.phase(of: desktop) == .loaded)
        #expect(fake.engine.value("interface/color-scheme", in: desktop) == "dark")
        // Following it again costs nothing.
        fake.engine.follow(desktop)
        let result2 = fake.drain().isEmpty
        #expect(result2)
        guard case .loadFinished(desktop, loaded: true)? = after.first else {
            Issue.record("the first load did not end with loadFinished")
            return
        }
    }

    @Test("a load sent while the bus is starting prefsd is not sent again when prefsd's name appears")
    func activationLoadsOnce() {
        var fake = FakeTransport()
        fake.engine.follow(desktop)
        fake.engine.follow(ClientDomain("org.gnome.mutter"))
        fake.drain()
        #expect(fake.loads.count == 2)
        // The bus starts prefsd for the first call: its name appears before any answer.
        fake.engine.ownerChanged(to: ":1.7")
        let result3 = fake.drain().isEmpty
        #expect(result3)
        for (domain, token) in fake.loads {
            fake.engine.loadAnswered(domain, token: token, values: ["k": "v"], forced: [], serial: 2, sender: ":1.7")
        }
        fake.drain()
        #expect(fake.loads.count == 2, "each domain is loaded once")
        #expect(fake.engine.value("k", in: desktop) == "v")
    }

    @Test("a domain loaded from a prefsd that went away is loaded again from the next one")
    func restartReloads() {
        var fake = FakeTransport()
        fake.load(desktop, ["k": "old"], sender: ":1.5")
        fake.engine.ownerChanged(to: ":1.5")
        let result4 = fake.drain().isEmpty
        #expect(result4, "the owner it was loaded from: nothing to do")
        fake.engine.ownerChanged(to: nil)
        let result5 = fake.drain().isEmpty
        #expect(result5)
        fake.engine.ownerChanged(to: ":1.9")
        fake.drain()
        #expect(fake.loads.count == 2)
        let token = fake.loads[1].1
        // Serials start again with the new prefsd: its answer of serial 1 wins.
        fake.engine.loadAnswered(desktop, token: token, values: ["k": "new"], forced: [], serial: 1, sender: ":1.9")
        fake.drain()
        #expect(fake.engine.value("k", in: desktop) == "new")
        #expect(fake.changedKeys == ["k"])
    }

    @Test("a load answered by a prefsd that is no longer the owner is sent again")
    func staleAnswerReloads() {
        var fake = FakeTransport()
        fake.load(desktop, ["k": "a"], sender: ":1.5")
        fake.engine.reload(desktop)
        fake.drain()
        fake.engine.ownerChanged(to: ":1.9")
        fake.drain()
        #expect(fake.loads.count == 2, "the reload in flight is not doubled")
        fake.engine.loadAnswered(desktop, token: fake.loads[1].1, values: ["k": "stale"], forced: [], serial: 9, sender: ":1.5")
        fake.drain()
        #expect(fake.loads.count == 3)
        #expect(fake.engine.value("k", in: desktop) == "a")
    }

    @Test("a signal newer than the load's answer wins over it, whatever order they are fed in")
    func signalNewerThanAnswer() {
        var fake = FakeTransport()
        fake.engine.ownerChanged(to: ":1.5")
        fake.engine.follow(desktop)
        fake.drain()
        let token = fake.loads[0].1
        // An adapter whose signals and answers come on different threads: the signal of
        // serial 10 is fed before the answer of serial 8.
        fake.engine.changed(desktop, changed: ["k": "from-signal"], removed: ["gone"], serial: 10, sender: ":1.5")
        fake.engine.loadAnswered(desktop, token: token, values: ["k": "from-answer", "gone": "x", "other": "o"], forced: [], serial: 8, sender: ":1.5")
        fake.drain()
        #expect(fake.engine.value("k", in: desktop) == "from-signal")
        #expect(fake.engine.value("gone", in: desktop) == nil)
        #expect(fake.engine.value("other", in: desktop) == "o")
        // An older signal fed late changes nothing.
        fake.engine.changed(desktop, changed: ["other": "older"], removed: [], serial: 7, sender: ":1.5")
        #expect(fake.engine.value("other", in: desktop) == "o")
        let result6 = fake.drain().isEmpty
        #expect(result6)
    }

    @Test("signals from a connection that does not own prefsd's name are ignored")
    func foreignSignals() {
        var fake = FakeTransport()
        fake.load(desktop, ["k": "v"], sender: ":1.5")
        fake.engine.changed(desktop, changed: ["k": "spoof"], removed: [], serial: 99, sender: ":1.66")
        #expect(fake.engine.value("k", in: desktop) == "v")
        fake.engine.changed(desktop, changed: ["k": "real"], removed: [], serial: 99, sender: ":1.5")
        #expect(fake.engine.value("k", in: desktop) == "real")
        fake.drain()
        #expect(fake.changedKeys == ["k"])
    }

    @Test("a change that left keys out loads the domain again; one in flight is not doubled unless older")
    func invalidatedReloads() {
        var fake = FakeTransport()
        fake.load(desktop, ["k": "v"], serial: 1, sender: ":1.5")
        fake.engine.changed(desktop, changed: [:], removed: [], invalidated: [""], serial: 4, sender: ":1.5")
        fake.drain()
        #expect(fake.loads.count == 2)
        fake.engine.changed(desktop, changed: [:], removed: [], invalidated: ["big"], serial: 6, sender: ":1.5")
        fake.drain()
        #expect(fake.loads.count == 2)
        // The answer predates the second invalidation (serial 5 < 6): loaded once more.
        fake.engine.loadAnswered(desktop, token: fake.loads[1].1, values: ["k": "v", "big": "1"], forced: [], serial: 5, sender: ":1.5")
        fake.drain()
        #expect(fake.loads.count == 3)
        fake.engine.loadAnswered(desktop, token: fake.loads[2].1, values: ["k": "v", "big": "2"], forced: [], serial: 7, sender: ":1.5")
        fake.drain()
        #expect(fake.loads.count == 3)
        #expect(fake.engine.value("big", in: desktop) == "2")
    }

    @Test("a failed first load leaves the domain unavailable; prefsd appearing loads it again")
    func failedLoad() {
        var fake = FakeTransport()
        fake.engine.follow(desktop)
        fake.drain()
        fake.engine.loadFailed(desktop, token: fake.loads[0].1, reason: "no prefsd")
        let actions = fake.drain()
        #expect(fake.engine.phase(of: desktop) == .unavailable)
        guard case .loadFinished(desktop, loaded: false)? = actions.first else {
            Issue.record("no loadFinished(false)")
            return
        }
        let result7 = fake.engine.write([(key: "k", value: "v")], in: desktop)
        #expect(!result7)
        fake.engine.ownerChanged(to: ":1.3")
        fake.drain()
        #expect(fake.loads.count == 2)
    }
}

@Suite("Client engine: forced keys and writes")
struct ClientEngineWritingTests {
    @Test("a forced key is refused; a change of forcing is told")
    func forcedKeys() {
        var fake = FakeTransport()
        fake.load(desktop, ["locked": "admin", "free": "x"], sender: ":1.5", forced: ["locked"])
        #expect(fake.engine.isForced("locked", in: desktop))
        let result8 = fake.engine.write([(key: "free", value: "y"), (key: "locked", value: "mine")], in: desktop)
        #expect(!result8)
        #expect(fake.engine.value("free", in: desktop) == "x", "a refused batch changes nothing")
        let result9 = fake.drain().isEmpty
        #expect(result9)
        fake.engine.forcedKeysChanged(desktop, keys: ["free"], serial: 3, sender: ":1.5")
        let actions = fake.drain()
        guard case .forcedChanged(desktop, let keys)? = actions.first else {
            Issue.record("no forcedChanged")
            return
        }
        #expect(keys == ["free", "locked"])
        let result10 = fake.engine.write([(key: "locked", value: "mine")], in: desktop)
        #expect(result10)
    }

    @Test("a burst of writes goes out as two calls: the first, then the rest merged while it is in flight")
    func coalescing() {
        var fake = FakeTransport()
        fake.load(desktop, [:], sender: ":1.5")
        for index in 0..<8 {
            let result11 = fake.engine.write([(key: "k\(index)", value: "v\(index)")], in: desktop)
            #expect(result11)
            // The adapter flushes as soon as it is asked (the GIO module does).
            for action in fake.drain() { if case .flushNeeded(let domain) = action { fake.engine.flush(domain) } }
            fake.drain()
        }
        #expect(fake.applies.count == 1)
        #expect(fake.applies[0].set == ["k0": "v0"])
        fake.engine.writeAnswered(desktop, token: fake.applies[0].token, serial: 4, sender: ":1.5")
        for action in fake.drain() { if case .flushNeeded(let domain) = action { fake.engine.flush(domain) } }
        fake.drain()
        #expect(fake.applies.count == 2)
        #expect(fake.applies[1].set.count == 7)
        #expect(fake.engine.hasPendingWrites())
        fake.engine.writeAnswered(desktop, token: fake.applies[1].token, serial: 5, sender: ":1.5")
        let settled = fake.drain()
        #expect(!fake.engine.hasPendingWrites())
        guard case .writesSettled? = settled.last else {
            Issue.record("no writesSettled")
            return
        }
    }

    @Test("writes made before the adapter flushes merge into one Apply; the last value of a key wins")
    func mergeBeforeFlush() {
        var fake = FakeTransport()
        fake.load(desktop, ["gone": "x"], sender: ":1.5")
        _ = fake.engine.write([(key: "a", value: "1")], in: desktop)
        _ = fake.engine.write([(key: "a", value: "2"), (key: "gone", value: nil)], in: desktop)
        fake.engine.flushAll()
        fake.drain()
        #expect(fake.applies.count == 1)
        #expect(fake.applies[0].set == ["a": "2"])
        #expect(fake.applies[0].remove == ["gone"])
    }

    @Test("a pending write is read over the cache until answered, whatever signals come meanwhile")
    func pendingOverCache() {
        var fake = FakeTransport()
        fake.load(desktop, ["k": "v1"], serial: 1, sender: ":1.5")
        let result12 = fake.engine.write([(key: "k", value: "mine")], in: desktop)
        #expect(result12)
        fake.engine.flushAll()
        fake.drain()
        // Another client's change, committed before ours.
        fake.engine.changed(desktop, changed: ["k": "theirs"], removed: [], serial: 3, sender: ":1.5")
        #expect(fake.engine.value("k", in: desktop) == "mine")
        #expect(fake.engine.confirmedValue("k", in: desktop) == "theirs")
        fake.engine.writeAnswered(desktop, token: fake.applies[0].token, serial: 5, sender: ":1.5")
        #expect(fake.engine.value("k", in: desktop) == "mine")
        // Our own Changed signal (serial 4, sent before the answer) arriving late changes nothing.
        fake.engine.changed(desktop, changed: ["k": "mine"], removed: [], serial: 4, sender: ":1.5")
        #expect(fake.engine.value("k", in: desktop) == "mine")
        fake.drain()
        #expect(fake.changedKeys.isEmpty, "readers saw mine throughout")
    }

    @Test("a removal that reveals an administrator's default reads as the default prefsd's Changed carries, whichever of it and the answer comes first")
    func removalRevealsDefault() {
        for signalFirst in [true, false] {
            var fake = FakeTransport()
            fake.load(desktop, ["k": "mine"], serial: 1, sender: ":1.5")
            _ = fake.engine.write([(key: "k", value: nil)], in: desktop)
            fake.engine.flushAll()
            fake.drain()
            #expect(fake.engine.value("k", in: desktop) == nil)
            // prefsd commits the removal; a read now answers the administrator's default,
            // which its Changed (serial 3) carries before the answer (serial 4).
            let signal = { (fake: inout FakeTransport) in
                fake.engine.changed(desktop, changed: ["k": "site"], removed: [], serial: 3, sender: ":1.5")
            }
            if signalFirst { signal(&fake) }
            fake.engine.writeAnswered(desktop, token: fake.applies[0].token, serial: 4, sender: ":1.5")
            if !signalFirst { signal(&fake) }
            #expect(fake.engine.value("k", in: desktop) == "site", "signal first: \(signalFirst)")
            #expect(fake.engine.confirmedValue("k", in: desktop) == "site")
        }
    }

    @Test("a removal answered with no Changed (nothing was there to reveal) reads as removed")
    func removalWithoutSignal() {
        var fake = FakeTransport()
        fake.load(desktop, ["k": "mine"], serial: 1, sender: ":1.5")
        _ = fake.engine.write([(key: "k", value: nil)], in: desktop)
        fake.engine.flushAll()
        fake.drain()
        fake.engine.changed(desktop, changed: [:], removed: ["k"], serial: 3, sender: ":1.5")
        fake.engine.writeAnswered(desktop, token: fake.applies[0].token, serial: 4, sender: ":1.5")
        #expect(fake.engine.value("k", in: desktop) == nil)
        #expect(fake.engine.entries(of: desktop)["k"] == nil)
    }

    @Test("a refused write reads as prefsd holds the key again, and is told as a change")
    func refusedWrite() {
        var fake = FakeTransport()
        fake.load(desktop, ["k": "v1"], sender: ":1.5")
        _ = fake.engine.write([(key: "k", value: "bad")], in: desktop)
        fake.engine.flushAll()
        fake.drain()
        fake.engine.writeFailed(desktop, token: fake.applies[0].token, failure: .refused(.quotaExceeded), reason: "quota")
        let actions = fake.drain()
        #expect(fake.engine.value("k", in: desktop) == "v1")
        #expect(fake.changedKeys == ["k"])
        #expect(actions.contains { if case .writeFailed(desktop, ["k"], "quota") = $0 { true } else { false } })
    }

    @Test("a batch refused for one key is sent again key by key, so the others are stored")
    func retryAlone() {
        var fake = FakeTransport()
        fake.load(desktop, [:], sender: ":1.5")
        _ = fake.engine.write([(key: "a", value: "1"), (key: "b", value: "2")], in: desktop)
        fake.engine.flushAll()
        fake.drain()
        fake.engine.writeFailed(desktop, token: fake.applies[0].token, failure: .refused(.invalidValue), reason: "invalid")
        // A write made now does not merge into the keys sent alone.
        _ = fake.engine.write([(key: "c", value: "3")], in: desktop)
        fake.drain()
        fake.engine.flushAll()
        fake.drain()
        #expect(fake.applies.count == 2)
        #expect(fake.applies[1].set == ["a": "1"])
        #expect(fake.engine.value("b", in: desktop) == "2")
    }

    @Test("a replaced domain reads as its new contents until answered, and the writes after it over them")
    func replaceDomain() {
        var fake = FakeTransport()
        let volatile = ClientDomain("session", volatile: true)
        fake.load(volatile, ["a": "1", "b": "2"], sender: ":1.5")
        let result13 = fake.engine.write([(key: "a", value: "x")], in: volatile)
        #expect(!result13, "a volatile domain is replaced whole")
        let result14 = fake.engine.replace(volatile, with: ["a": "9"])
        #expect(result14)
        #expect(fake.engine.entries(of: volatile) == ["a": "9"])
        fake.engine.flushAll()
        let actions = fake.drain()
        #expect(fake.changedKeys.sorted() == ["a", "b"])
        guard let token = actions.compactMap({ if case .replace(_, ["a": "9"]?, let token) = $0 { token } else { nil } }).first else {
            Issue.record("no replace call")
            return
        }
        fake.engine.writeAnswered(volatile, token: token, serial: 3, sender: ":1.5")
        #expect(fake.engine.entries(of: volatile) == ["a": "9"])
    }
}

@Suite("Client engine: the outcome of each write")
struct ClientEngineWriteOutcomeTests {
    /// The `writeEnded` news taken from the engine: tickets and failure, in order.
    static func ended(_ actions: [ClientAction<String>]) -> [(tickets: [UInt64], failure: String?)] {
        actions.compactMap { if case .writeEnded(_, let tickets, let failure) = $0 { (tickets, failure) } else { nil } }
    }

    @Test("a write merged into a batch is told ended with it, after the news of what readers see")
    func mergedWritesEndTogether() {
        var fake = FakeTransport()
        fake.load(desktop, [:], sender: ":1.5")
        guard let first = fake.engine.submit([(key: "k", value: "1")], in: desktop) else {
            Issue.record("first write refused")
            return
        }
        fake.engine.flushAll()
        fake.drain()
        // Two writes of the same key while the first is in flight: they merge into one call.
        let second = fake.engine.submit([(key: "k", value: "2")], in: desktop)
        let third = fake.engine.submit([(key: "k", value: "3"), (key: "j", value: "x")], in: desktop)
        fake.drain()
        fake.engine.writeAnswered(desktop, token: fake.applies[0].token, serial: 4, sender: ":1.5")
        for action in fake.drain() { if case .flushNeeded(let domain) = action { fake.engine.flush(domain) } }
        fake.drain()
        #expect(Self.ended(fake.sent).map(\.tickets) == [[first]])
        #expect(fake.applies.count == 2)
        #expect(fake.applies[1].set == ["k": "3", "j": "x"])
        fake.engine.writeAnswered(desktop, token: fake.applies[1].token, serial: 5, sender: ":1.5")
        let last = fake.drain()
        let tickets = [second, third].compactMap { $0 }
        #expect(Self.ended(last).map(\.tickets) == [tickets.sorted()])
        #expect(Self.ended(last).first?.failure == nil)
        guard case .writesSettled? = last.last else {
            Issue.record("writesSettled does not come last")
            return
        }
    }

    @Test("a refused write is told ended with the reason, after readers see prefsd's value again")
    func refusedWriteEnds() {
        var fake = FakeTransport()
        fake.load(desktop, ["k": "v1"], sender: ":1.5")
        let ticket = fake.engine.submit([(key: "k", value: "bad")], in: desktop)
        fake.engine.flushAll()
        fake.drain()
        fake.engine.writeFailed(desktop, token: fake.applies[0].token, failure: .refused(.quotaExceeded), reason: "quota")
        let actions = fake.drain()
        #expect(Self.ended(actions).map(\.tickets) == [[ticket].compactMap { $0 }])
        #expect(Self.ended(actions).first?.failure == "quota")
        let changedAt = actions.firstIndex { if case .changed = $0 { true } else { false } }
        let endedAt = actions.firstIndex { if case .writeEnded = $0 { true } else { false } }
        guard let changedAt, let endedAt else {
            Issue.record("no changed or no writeEnded news")
            return
        }
        #expect(changedAt < endedAt)
    }

    @Test("a batch refused for one key and sent again key by key tells each write its own outcome")
    func splitBatchEndsPerKey() {
        var fake = FakeTransport()
        fake.load(desktop, [:], sender: ":1.5")
        let good = fake.engine.submit([(key: "a", value: "1")], in: desktop)
        let bad = fake.engine.submit([(key: "b", value: "bad")], in: desktop)
        fake.engine.flushAll()
        fake.drain()
        #expect(fake.applies.count == 1)
        fake.engine.writeFailed(desktop, token: fake.applies[0].token, failure: .refused(.invalidValue), reason: "invalid")
        #expect(Self.ended(fake.drain()).isEmpty, "nothing ended: the keys go again alone")
        fake.engine.flushAll()
        fake.drain()
        fake.engine.writeAnswered(desktop, token: fake.applies[1].token, serial: 3, sender: ":1.5")
        fake.engine.flushAll()
        fake.drain()
        fake.engine.writeFailed(desktop, token: fake.applies[2].token, failure: .refused(.invalidValue), reason: "invalid")
        fake.drain()
        let outcomes = Self.ended(fake.sent)
        #expect(outcomes.count == 2)
        #expect(outcomes.first { $0.tickets == [good].compactMap { $0 } }?.failure == nil)
        #expect(outcomes.first { $0.tickets == [bad].compactMap { $0 } }?.failure == "invalid")
    }

    @Test("a replacement is told ended with its ticket: stored, or refused with the reason after readers see the old contents")
    func replacementEnds() {
        var fake = FakeTransport()
        let volatile = ClientDomain("session", volatile: true)
        fake.load(volatile, ["a": "1"], sender: ":1.5")
        guard let stored = fake.engine.submitReplace(volatile, with: ["a": "2"]) else {
            Issue.record("replacement refused")
            return
        }
        fake.engine.flushAll()
        fake.drain()
        fake.engine.writeAnswered(volatile, token: fake.replaces[0].token, serial: 3, sender: ":1.5")
        let answered = fake.drain()
        #expect(Self.ended(answered).map(\.tickets) == [[stored]])
        #expect(Self.ended(answered).first?.failure == nil)
        let refused = fake.engine.submitReplace(volatile, with: ["a": "3"])
        #expect(fake.engine.entries(of: volatile) == ["a": "3"])
        fake.engine.flushAll()
        fake.drain()
        fake.engine.writeFailed(volatile, token: fake.replaces[1].token, failure: .refused(.exists), reason: "exists")
        let failed = fake.drain()
        #expect(Self.ended(failed).map(\.tickets) == [[refused].compactMap { $0 }])
        #expect(Self.ended(failed).first?.failure == "exists")
        #expect(fake.engine.entries(of: volatile) == ["a": "2"])
        #expect(fake.engine.submitReplace(ClientDomain("not.followed"), with: [:]) == nil)
    }

    @Test("a load is on its way from follow to its answer, a reload included")
    func loadInFlight() {
        var fake = FakeTransport()
        #expect(!fake.engine.isLoading())
        fake.engine.follow(desktop)
        #expect(fake.engine.isLoading(desktop) && fake.engine.isLoading())
        fake.drain()
        fake.engine.loadAnswered(desktop, token: fake.loads[0].1, values: [:], forced: [], serial: 1, sender: ":1.5")
        #expect(!fake.engine.isLoading())
        fake.engine.reload(desktop)
        #expect(fake.engine.isLoading(desktop))
    }

    @Test("a refused write gets no ticket and changes nothing")
    func refusedAtOnce() {
        var fake = FakeTransport()
        fake.load(desktop, ["k": "v"], sender: ":1.5", forced: ["k"])
        #expect(fake.engine.submit([(key: "k", value: "x")], in: desktop) == nil)
        #expect(fake.engine.submit([(key: "k", value: "x")], in: ClientDomain("not.followed")) == nil)
        #expect(fake.drain().isEmpty)
    }
}
