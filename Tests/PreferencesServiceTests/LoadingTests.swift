import BusTestSupport
import DBus
import Dispatch
import Foundation
import Logging
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy
import PreferencesStore
import ServiceTestSupport
import Synchronization
import Testing

@testable import PreferencesService

/// A service that answers while its store loads: a domain read before the whole store is
/// loaded answers what it answers after, and every other call waits for the whole store.
@Suite("Answering while the store loads")
struct LoadingTests {
    private static let logger = Logger(label: "prefsd.loading-tests") { _ in SwiftLogNoOpLogHandler() }

    /// A harness whose store holds `domains` (committed through a store of its own), then
    /// `sql` run on the database, running `afterLoad` once it is loaded; not started.
    private func harness(
        _ domains: [String: [String: PropertyListValue]], sql: String = "", limits: ServiceLimits = .default,
        afterLoad: (@Sendable () -> Void)? = nil
    ) throws -> (InProcessService, DomainStore) {
        let harness = try InProcessService(limits: limits, start: false, afterLoad: afterLoad)
        let directory = harness.directory.appendingPathComponent("store", isDirectory: true)
        do {
            let store = try DomainStore(directory: directory, logger: Self.logger)
            defer { store.close() }
            for (name, values) in domains {
                let domain = try DomainName(name)
                let done = DispatchSemaphore(value: 0)
                let result = Mutex<Result<Void, StoreError>?>(nil)
                store.commit(values.map { .set(domain, key: $0.key, value: $0.value) }, who: "test") { outcome in
                    result.withLock { $0 = outcome }
                    done.signal()
                }
                done.wait()
                try result.withLock { $0 }?.get()
            }
        }
        if !sql.isEmpty {
            let result = try runCommand("sqlite3", [directory.appendingPathComponent("store.sqlite").path, sql])
            #expect(result.status == 0, "sqlite3: \(result.stderr)")
        }
        return (harness, try DomainStore(directory: directory, logger: Self.logger))
    }

    /// The SQL that stores a string with a NUL character (against the store's rules) as `key` of `domain`.
    private static func nulRow(_ domain: String, _ key: String) -> String {
        let hex = PropertyListValue.string("Evil\u{0}Theme").encoded().map { String(format: "%02X", $0) }.joined()
        return "INSERT OR REPLACE INTO preference(domain, key, value) VALUES ('\(domain)', '\(key)', X'\(hex)');"
    }

    /// Starts `harness`'s service on `store` with its full load held until the returned
    /// semaphore is signalled, and a client of it.
    private func startHeld(_ harness: InProcessService, _ store: DomainStore) throws -> (DispatchSemaphore, InProcessClient) {
        let hold = DispatchSemaphore(value: 0)
        try harness.service.start(store: store, holdingFullLoadUntil: hold)
        return (hold, InProcessClient(connection: harness.connection))
    }

    private func isComplete(_ harness: InProcessService) -> Bool {
        harness.service.state.withLock { $0.domains?.isComplete } ?? false
    }

    @Test("a domain read before the whole store is loaded answers as after, damaged keys and their errors included")
    func readsWhileLoading() async throws {
        let (harness, store) = try harness(
            ["com.example.Editor": ["Good": .integer(1), "Theme": .string("plain")], "org.example.Other": ["k": .boolean(true)]],
            sql: Self.nulRow("com.example.Editor", "Theme") + Self.nulRow("com.example.Damaged", "Only"))
        defer { harness.stop() }
        let (hold, client) = try startHeld(harness, store)
        defer { hold.signal() }

        func answers() async throws -> [String] {
            var seen: [String] = []
            seen.append("\(try await client.readValue("com.example.Editor", "Good"))")
            seen.append("\(try await client.readDomain("com.example.Editor"))")
            for (domain, key) in [("com.example.Editor", "Theme"), ("com.example.Damaged", "Only"), ("com.example.Editor", "Absent")] {
                do {
                    _ = try await client.call("Read", [.string(domain), .string(key)])
                    seen.append("\(domain) \(key): a value")
                } catch let error as DBusError {
                    seen.append("\(error.name ?? ""): \(error.message)")
                }
            }
            seen.append("\(await client.refusal("ReadDomain", [.string("com.example.Damaged")]) ?? "a domain")")
            seen.append("\(try await client.call("Lookup", [.stringArray(["com.example.Damaged", "org.example.Other"]), .string("k")]))")
            return seen
        }
        let early = try await answers()
        #expect(!isComplete(harness), "the reads waited for the whole store")
        #expect(early[2].contains("left out at start"), "\(early)")
        #expect(early[3].contains("left out at start"), "\(early)")

        hold.signal()
        #expect(try await client.domains() == ["com.example.Editor", "org.example.Other"])
        #expect(isComplete(harness))
        #expect(try await answers() == early)
    }

    @Test("a write to a domain never read waits for the whole store, keeps the domain's other keys and is held to its quota")
    func writeWhileLoading() async throws {
        var limits = ServiceLimits.default
        limits.domainBytes = 4_000
        let big = PropertyListValue.string(String(repeating: "x", count: 2_500))
        let (harness, store) = try harness(["com.example.Editor": ["a": .integer(1), "big": big], "org.example.Other": ["k": .boolean(true)]], limits: limits)
        defer { harness.stop() }
        let (hold, client) = try startHeld(harness, store)
        defer { hold.signal() }

        let write = Task { try await client.write("com.example.Editor", "b", .integer(2)) }
        let refused = Task {
            await client.refusal("Write", [.string("com.example.Editor"), .string("more"), .variant(.string(String(repeating: "y", count: 2_000)))])
        }
        hold.signal()
        try await write.value
        #expect(await refused.value == PreferencesErrorName.quotaExceeded.busName)
        #expect(try await client.readDomain("com.example.Editor") == ["a": .integer(1), "big": big, "b": .integer(2)])
        #expect(try await client.domains() == ["com.example.Editor", "org.example.Other"])

        // The quotas are those of the whole store loaded at once.
        let counted = harness.service.state.withLock { state in
            state.domains.map { ($0.storeBytes, $0.domainBytes, $0.domainKeys, $0.persistentDomainCount) }
        }
        let eager = DomainState(committed: try store.loadAll(), limits: limits)
        #expect(counted?.0 == eager.storeBytes)
        #expect(counted?.1 == eager.domainBytes)
        #expect(counted?.2 == eager.domainKeys)
        #expect(counted?.3 == eager.persistentDomainCount)
    }

    @Test("a read that arrives after a held call is held behind it, not answered ahead of it")
    func readAfterHeldWrite() async throws {
        let (harness, store) = try harness(["com.example.Editor": ["k": .integer(1)]])
        defer { harness.stop() }
        let (hold, client) = try startHeld(harness, store)
        defer { hold.signal() }
        func held() -> Int { harness.service.state.withLock { $0.waiting.count } }
        func waitUntilHeld(_ count: Int) async {
            let deadline = ContinuousClock.now + .seconds(20)
            while held() < count && ContinuousClock.now < deadline { await Task.yield() }
        }

        let write = Task { try await client.write("com.example.Editor", "k", .integer(2)) }
        await waitUntilHeld(1)
        let read = Task { try await client.readValue("com.example.Editor", "k") }
        await waitUntilHeld(2)
        #expect(held() == 2, "the read was answered ahead of the write held before it")
        hold.signal()
        // Reads see what is durable: the read, dispatched right after the write, sees the
        // value before or after it; once the write is answered, every read sees it.
        #expect([.integer(1), .integer(2)].contains(try await read.value))
        try await write.value
        #expect(try await client.readValue("com.example.Editor", "k") == .integer(2))
    }

    @Test("what the configuration runs after the load runs once, with the whole store in the state")
    func afterLoad() async throws {
        let runs = Atomic<Int>(0)
        let ran = DispatchSemaphore(value: 0)
        let (harness, store) = try harness(["com.example.Editor": ["k": .integer(1)]]) {
            runs.add(1, ordering: .relaxed)
            ran.signal()
        }
        defer { harness.stop() }
        let (hold, client) = try startHeld(harness, store)
        // The full load waits for `hold`: nothing has run yet, however long this takes.
        #expect(try await client.readValue("com.example.Editor", "k") == .integer(1))
        #expect(runs.load(ordering: .relaxed) == 0)
        #expect(!isComplete(harness))
        hold.signal()
        #expect(ran.wait(timeout: .now() + 20) == .success, "afterLoad did not run within 20 s of the load's start")
        #expect(isComplete(harness))
        // A call answered after it: still once.
        try await client.write("com.example.Editor", "k", .integer(2))
        #expect(runs.load(ordering: .relaxed) == 1)
    }
}
