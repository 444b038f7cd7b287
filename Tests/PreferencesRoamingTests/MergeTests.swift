import PreferencesModel
import PropertyBased
import Testing

@testable import PreferencesRoaming

@Suite("Roaming merge")
struct MergeTests {
    @Test("a change made after seeing another wins over it, even against a clock far ahead")
    func clockAhead() {
        var a = Replica(machine: Fixture.machine(1))
        var b = Replica(machine: Fixture.machine(2), physical: 1_700_000_000_000 + 86_400_000)  // a day ahead
        b.store[Fixture.key("FontSize")] = .integer(20)
        b.reconcile()
        a.ledger.receive(b.ledger.file)
        a.reconcile()
        #expect(a.store[Fixture.key("FontSize")] == .integer(20))
        a.store[Fixture.key("FontSize")] = .integer(12)
        a.reconcile()
        b.ledger.receive(a.ledger.file)
        b.reconcile()
        #expect(b.store[Fixture.key("FontSize")] == .integer(12))
    }

    @Test("excluded keys and other domains are never published")
    func excluded() {
        var a = Replica(machine: Fixture.machine(1))
        a.store[Fixture.key("WindowFrame")] = .string("0 0 800 600")
        a.store[Fixture.key("FontSize", in: Fixture.domain("com.example.Other"))] = .integer(1)
        a.store[Fixture.key("FontSize")] = .integer(9)
        a.reconcile()
        #expect(a.ledger.log.map(\.key) == [Fixture.key("FontSize")])
    }

    @Test("a removal wins or loses like a write")
    func tombstone() {
        var a = Replica(machine: Fixture.machine(1))
        var b = Replica(machine: Fixture.machine(2))
        a.store[Fixture.key("K")] = .integer(1)
        a.reconcile()
        b.ledger.receive(a.ledger.file)
        b.reconcile()
        b.store[Fixture.key("K")] = nil
        b.reconcile()
        a.ledger.receive(b.ledger.file)
        a.reconcile()
        #expect(a.store[Fixture.key("K")] == nil && b.store[Fixture.key("K")] == nil)
    }

    @Test("a value applied but not yet marked adopted (a crash) is adopted, not published again")
    func crashAfterApply() {
        var a = Replica(machine: Fixture.machine(1))
        var b = Replica(machine: Fixture.machine(2))
        a.store[Fixture.key("K")] = .integer(1)
        a.reconcile()
        b.store[Fixture.key("K")] = .integer(0)
        b.reconcile()
        a.store[Fixture.key("K")] = .integer(2)
        a.reconcile()
        b.ledger.receive(a.ledger.file)
        // b commits a's value, then dies before recording the adoption.
        b.store[Fixture.key("K")] = .integer(2)
        let plan = b.ledger.plan(local: b.store, selection: Fixture.selection) { _ in false }
        #expect(plan.publish.isEmpty && plan.apply.isEmpty && plan.adopt.map(\.stamp.machine) == [Fixture.machine(1)])
    }

    @Test("a key created and removed here after another machine set it: the removal is the later change")
    func createdAndRemoved() {
        var a = Replica(machine: Fixture.machine(1))
        var b = Replica(machine: Fixture.machine(2))
        a.set(Fixture.key("Size"), .integer(3))
        a.reconcile()
        b.physical += 10
        b.set(Fixture.key("Size"), .integer(4))
        b.set(Fixture.key("Size"), nil)
        b.reconcile()
        b.ledger.receive(a.ledger.file)
        b.reconcile()
        a.ledger.receive(b.ledger.file)
        a.reconcile()
        #expect(a.store[Fixture.key("Size")] == nil && b.store[Fixture.key("Size")] == nil)
    }

    @Test("a key written here right after roaming began is this machine's change, not overwritten by an older one")
    func writtenAfterJoining() {
        var a = Replica(machine: Fixture.machine(1))
        var b = Replica(machine: Fixture.machine(2))
        a.set(Fixture.key("FontSize"), .integer(12))
        a.reconcile()
        b.physical += 10
        b.set(Fixture.key("FontSize"), .integer(16))
        b.ledger.receive(a.ledger.file)
        b.reconcile()
        a.ledger.receive(b.ledger.file)
        a.reconcile()
        #expect(b.store[Fixture.key("FontSize")] == .integer(16) && a.store[Fixture.key("FontSize")] == .integer(16))
    }

    @Test("compaction keeps the latest change per key and drops old removals")
    func compaction() {
        var a = Replica(machine: Fixture.machine(1))
        for n in 0..<10 {
            a.store[Fixture.key("K")] = .integer(Int64(n))
            a.reconcile()
        }
        a.store[Fixture.key("Old")] = .integer(1)
        a.reconcile()
        a.store[Fixture.key("Old")] = nil
        a.reconcile()
        #expect(a.ledger.log.count == 12)
        a.ledger.compact(now: a.physical, limits: .default)
        #expect(a.ledger.log.count == 2)
        a.ledger.compact(now: a.physical + RoamingLimits.default.tombstoneMilliseconds + 1, limits: .default)
        #expect(a.ledger.log.map(\.key) == [Fixture.key("K")])
    }

    @Test("keys are told apart by their bytes: NFC and NFD spellings of one name are two keys")
    func keysByBytes() {
        let composed = Fixture.key("Caf\u{E9}"), decomposed = Fixture.key("Caf\u{65}\u{301}")
        #expect(composed != decomposed)
        #expect(Set([composed, decomposed]).count == 2)
        var a = Replica(machine: Fixture.machine(1))
        a.store[composed] = .integer(1)
        a.store[decomposed] = .integer(2)
        a.reconcile()
        #expect(a.ledger.own.count == 2)
        #expect(a.ledger.own[composed]?.value == .integer(1) && a.ledger.own[decomposed]?.value == .integer(2))
    }

    @Test("the same entries in any order and number give the same winners")
    func winnersCommute() async {
        let machines = (1...3).map(Fixture.machine)
        let entryGen = zip(Gen.int(in: 0...3), Gen.int(in: 0...2), Gen.int(in: 0...5), Gen.int(in: 0...4)).map { k, m, t, v in
            RoamingEntry(
                key: Fixture.key("K\(k)"), value: v == 0 ? nil : .integer(Int64(v)),
                stamp: RoamingStamp(time: HybridTime(wall: UInt64(t)), machine: machines[m]))
        }
        await propertyCheck(count: 300, input: entryGen.array(of: 1...30), Gen.int(in: 0...Int.max)) { entries, seed in
            var rng = SplitMix(seed: UInt64(seed))
            var shuffled = entries.shuffled(using: &rng)
            shuffled += entries.filter { _ in Bool.random(using: &rng) }
            shuffled.shuffle(using: &rng)
            let one = entries.winners(), other = shuffled.winners()
            // Whole entries: of two with one stamp and different values, the same one wins too.
            #expect(one == other)
        }
    }

    @Test("two changes with one stamp but different values: every machine ends with the same one, whichever it read first")
    func tieOrderIndependent() {
        let twin = Fixture.machine(9)
        let stamp = RoamingStamp(time: HybridTime(wall: 1_700_000_000_000), machine: twin)
        let key = Fixture.key("K")
        func file(_ values: PropertyListValue?...) -> RoamingFile {
            RoamingFile(machine: twin, name: "twin", entries: values.map { RoamingEntry(key: key, value: $0, stamp: stamp) })
        }
        // Two versions of one machine's file that disagree (a machine cloned with its identity).
        for (first, second) in [(PropertyListValue.integer(1), PropertyListValue.integer(2)), (.string("b"), .string("a"))] {
            var a = Replica(machine: Fixture.machine(1)), b = Replica(machine: Fixture.machine(2))
            a.ledger.receive(file(first))
            a.reconcile()
            a.ledger.receive(file(second))
            a.reconcile()
            b.ledger.receive(file(second))
            b.reconcile()
            b.ledger.receive(file(first))
            b.reconcile()
            #expect(a.store[key] != nil && a.store[key] == b.store[key], "\(String(describing: a.store[key])) against \(String(describing: b.store[key]))")
        }
        // One file holding both, in either order; a removal and a value.
        var c = Replica(machine: Fixture.machine(3)), d = Replica(machine: Fixture.machine(4))
        c.ledger.receive(file(.integer(5), nil))
        c.reconcile()
        d.ledger.receive(file(nil, .integer(5)))
        d.reconcile()
        #expect(c.store[key] == d.store[key])
    }

    /// An operation of the simulation, decoded from a number.
    enum Operation {
        case write(replica: Int, key: Int, value: Int)
        case remove(replica: Int, key: Int)
        case deliver(from: Int, to: Int, version: Int)
        case reconcile(replica: Int)

        init(_ n: Int, replicas: Int) {
            let r = n % replicas, rest = n / replicas
            switch rest % 4 {
            case 0: self = .write(replica: r, key: (rest / 4) % 3, value: (rest / 12) % 5)
            case 1: self = .remove(replica: r, key: (rest / 4) % 3)
            case 2: self = .deliver(from: (rest / 4) % replicas, to: r, version: rest / 16)
            default: self = .reconcile(replica: r)
            }
        }
    }

    @Test("random interleavings, duplications and stale re-deliveries of the same files give one final state")
    func convergence() async {
        await propertyCheck(count: 300, input: Gen.int(in: 0...100_000).array(of: 5...80), Gen.int(in: 0...2)) { numbers, skew in
            let count = 3
            var replicas = (0..<count).map { Replica(machine: Fixture.machine($0), physical: 1_700_000_000_000 + UInt64($0 == skew ? 3_600_000 : 0)) }
            for n in numbers {
                switch Operation(n, replicas: count) {
                case .write(let r, let k, let v):
                    replicas[r].set(Fixture.key("K\(k)"), .integer(Int64(v)))
                    replicas[r].physical += 1
                case .remove(let r, let k):
                    replicas[r].set(Fixture.key("K\(k)"), nil)
                case .deliver(let from, let to, let version):
                    guard from != to, !replicas[from].versions.isEmpty else { continue }
                    let file = replicas[from].versions[version % replicas[from].versions.count]
                    replicas[to].ledger.receive(file)
                    replicas[to].reconcile()
                case .reconcile(let r):
                    replicas[r].reconcile()
                }
            }
            // Everyone publishes what is left, then every latest file reaches everyone, until quiet.
            for round in 0..<10 {
                var changed = false
                for r in 0..<count { changed = replicas[r].reconcile() || changed }
                for to in 0..<count {
                    for from in 0..<count where from != to { replicas[to].ledger.receive(replicas[from].ledger.file) }
                    changed = replicas[to].reconcile() || changed
                }
                if !changed { break }
                #expect(round < 9, "still changing after 10 rounds")
            }
            let final = replicas[0].store
            for replica in replicas.dropFirst() { #expect(replica.store == final) }
            // …and it is the latest change of each key among all files.
            let winners = replicas.flatMap(\.ledger.log).winners()
            for (key, entry) in winners { #expect(final[key] == entry.value, "\(key)") }
        }
    }
}

/// A seeded generator (SplitMix64).
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E9B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
