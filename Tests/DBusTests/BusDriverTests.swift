import BusTestSupport
import Foundation
import Synchronization
import Testing

@testable import DBus

/// The bus driver's methods as one typed call each, in both forms.
@Suite struct BusDriverTests {
    @Test("GetNameOwner, NameHasOwner and GetConnectionUnixProcessID answer typed, async and by completion")
    func typedCalls() async throws {
        let fixture = try EchoFixture()
        let name = "com.example.Owned"
        #expect(try await fixture.server.requestName(name, flags: 4) == 1)
        #expect(try await fixture.client.getNameOwner(name) == fixture.server.uniqueName)
        #expect(try await fixture.client.nameHasOwner(name))
        #expect(try await fixture.client.nameHasOwner("com.example.Nobody") == false)
        // Both connections live in this process.
        #expect(try await fixture.client.getConnectionUnixProcessID(name) == UInt32(getpid()))

        let owner: Result<String, DBusError> = await withCheckedContinuation { continuation in
            fixture.client.getNameOwner("com.example.Nobody") { continuation.resume(returning: $0) }
        }
        guard case .failure(let error) = owner, error.code == .remote, let errorName = error.name else {
            Issue.record("GetNameOwner of an unowned name answered \(owner)")
            return
        }
        #expect(errorName == StandardErrorName.nameHasNoOwner)
        let pid: Result<UInt32, DBusError> = await withCheckedContinuation { continuation in
            fixture.client.getConnectionUnixProcessID(fixture.server.uniqueName) { continuation.resume(returning: $0) }
        }
        #expect(try pid.get() == UInt32(getpid()))
    }

    @Test("AddMatch and RemoveMatch by completion route signals, and NameOwnerChanged is read once")
    func matchByCompletion() async throws {
        let fixture = try EchoFixture()
        let changes = Mutex<[(name: String, oldOwner: String, newOwner: String)]>([])
        fixture.client.setSignalHandler { message in
            if let change = BusDriver.ownerChange(message) { changes.withLock { $0.append(change) } }
        }
        let added: Result<Void, DBusError> = await withCheckedContinuation { continuation in
            fixture.client.addMatch(BusDriver.ownerChangedRule("com.example.Watched")) { continuation.resume(returning: $0) }
        }
        try added.get()
        #expect(try await fixture.server.requestName("com.example.Watched", flags: 4) == 1)
        // The bus sends NameOwnerChanged before it answers ReleaseName's caller, and this
        // round trip through the bus comes after both: the signal has arrived by its end.
        #expect(try await fixture.server.releaseName("com.example.Watched") == 1)
        _ = try await fixture.client.nameHasOwner("com.example.Watched")
        let seen = changes.withLock { $0 }
        #expect(seen.map(\.name) == ["com.example.Watched", "com.example.Watched"])
        #expect(seen.first?.newOwner == fixture.server.uniqueName)
        #expect(seen.last?.newOwner == "")
        let removed: Result<Void, DBusError> = await withCheckedContinuation { continuation in
            fixture.client.removeMatch(BusDriver.ownerChangedRule("com.example.Watched")) { continuation.resume(returning: $0) }
        }
        try removed.get()
    }
}
