import PreferencesModel

@testable import PreferencesRoaming

/// Small helpers for the roaming tests.
enum Fixture {
    static let editor = domain("com.example.Editor")

    static func domain(_ name: String) -> DomainName {
        do { return try DomainName(name) } catch { preconditionFailure("\(error)") }
    }

    static func machine(_ n: Int) -> MachineID { MachineID(derivedFrom: "machine-\(n)") }

    static func key(_ name: String, in domain: DomainName = editor) -> RoamingKey { RoamingKey(domain, name) }

    /// The bus's nesting rule, as the service passes it.
    static func check(_ value: PropertyListValue, _ subject: String) throws {
        func depth(_ value: PropertyListValue) -> Int {
            switch value {
            case .array(let items): 1 + (items.map(depth).max() ?? 0)
            case .dictionary(let entries): 1 + (entries.values.map(depth).max() ?? 0)
            default: 0
            }
        }
        if depth(value) > 32 { throw TestError("\(subject) nests \(depth(value)) deep, over the limit of 32") }
    }

    static let selection = RoamingSelection(domains: [editor], excluded: [editor: ["Window*"]])
}

struct TestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One simulated machine: a store (key → value) and its ledger, reconciled as the service
/// does, without a bus or a folder.
struct Replica {
    var store: [RoamingKey: PropertyListValue] = [:]
    var ledger: RoamingLedger
    var physical: UInt64
    /// Every version of this machine's file, oldest first.
    var versions: [RoamingFile] = []
    /// Keys written or removed here since the last reconcile.
    var touched: Set<RoamingKey> = []

    /// Sets (or removes, `nil`) a key here, as a user would.
    mutating func set(_ key: RoamingKey, _ value: PropertyListValue?) {
        store[key] = value
        touched.insert(key)
    }

    init(machine: MachineID, physical: UInt64 = 1_700_000_000_000) {
        ledger = RoamingLedger(machine: machine, name: "m\(machine.rawValue.prefix(4))")
        self.physical = physical
    }

    /// Reconciles until nothing is left to do; returns whether anything changed.
    @discardableResult
    mutating func reconcile(selection: RoamingSelection = Fixture.selection) -> Bool {
        var changed = false
        for _ in 0..<10 {
            let local = store.filter { selection.roams($0.key) }
            let plan = ledger.plan(local: local, touched: touched, selection: selection) { _ in false }
            touched = []
            if plan.isEmpty { break }
            changed = true
            if !plan.publish.isEmpty {
                physical += 1
                ledger.publish(plan.publish, physical: physical)
                versions.append(ledger.file)
            }
            ledger.adopt(plan.adopt)
            for entry in plan.apply { store[entry.key] = entry.value }
            ledger.adopt(plan.apply)
        }
        return changed
    }
}
