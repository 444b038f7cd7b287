import CGLib
import DBus
import Dconf
import Foundation
import PreferencesModel
import PreferencesProtocol
import ServiceTestSupport
import Testing

/// dconf's front in process: `Change` and `Init` delivered on the connection that serves
/// dconf's objects, answered there, with `Notify` there and `Changed` on the main
/// connection, and dconf's file read back as dconf's engine reads it.
@Suite("dconf's front, in process")
struct InProcessDconfTests {
    @Test("a Change is answered on dconf's connection with its tag once dconf's file holds it; Notify goes out there, Changed on the main connection")
    func change() async throws {
        let harness = try InProcessService(dconf: true)
        defer { harness.stop() }
        let dconf = try #require(harness.dconfConnection)
        let reply = try await dconf.call(Self.change([("/org/example/app/size", g_variant_new_int32(42))]))
        guard case .string(let tag)? = reply.body.first else { throw InProcessDconfError("Change answered \(reply.body)") }
        #expect(tag.hasPrefix("\(dconf.uniqueName):user:"))
        #expect(try Self.fileValues(harness)["/org/example/app/size"]?.text == "42")
        // Sent right after the answer.
        let notify = try #require(await Self.notifies(dconf, count: 1).first)
        #expect(notify.body == [.string("/org/example/app/size"), .stringArray([""]), .string(tag)])
        let changed = await harness.connection.signals(count: 1)
        #expect(changed.compactMap(SentSignal.init) == [SentSignal(changed: "org.example.app", ["size": .integer(42)])])
        // Nothing of dconf's goes out on the main connection, nothing of prefsd's own on dconf's.
        #expect(!harness.connection.sent.contains { $0.interface == DconfBus.writerInterface })
        #expect(!dconf.sent.contains { $0.interface == PreferencesBus.interface })
    }

    @Test("a write through prefsd's own interface reaches dconf's file and Notify")
    func nativeWrite() async throws {
        let harness = try InProcessService(dconf: true)
        defer { harness.stop() }
        let dconf = try #require(harness.dconfConnection)
        let client = InProcessClient(connection: harness.connection)
        try await client.write("org.example.app", "name", .string("hello"))
        // `Init` is answered once the changes before it are in dconf's file.
        _ = try await dconf.call(Self.writerCall(DconfBus.initMethod, body: []))
        #expect(try Self.fileValues(harness)["/org/example/app/name"]?.text == "'hello'")
        let notify = await Self.notifies(dconf, count: 1)
        #expect(notify.first?.body.first == .string("/org/example/app/name"))
    }

    @Test("dconf's objects are not on the main connection, and prefsd's own object is not on dconf's")
    func objectsApart() async throws {
        let harness = try InProcessService(dconf: true)
        defer { harness.stop() }
        let dconf = try #require(harness.dconfConnection)
        let onMain = await Self.refusal { try await harness.connection.call(Self.writerCall(DconfBus.initMethod, body: [])) }
        #expect(onMain == "org.freedesktop.DBus.Error.UnknownObject")
        let write = DBusMessage.methodCall(
            destination: nil, path: PreferencesBus.objectPath, interface: PreferencesBus.interface, member: "Write",
            body: [.string("NSGlobalDomain"), .string("k"), .variant(.int32(1))])
        #expect(await Self.refusal { try await dconf.call(write) } == "org.freedesktop.DBus.Error.UnknownObject")
    }

    @Test("a caller that left before it was identified is refused on dconf's connection, and runs as the host's on the main one")
    func departedCaller() async throws {
        let harness = try InProcessService(dconf: true)
        defer { harness.stop() }
        let dconf = try #require(harness.dconfConnection)
        let gone = DBusError.remote(name: StandardErrorName.nameHasNoOwner, message: "the name has left")
        harness.connection.answerProcessID(of: ":1.300", with: .failure(gone))
        harness.connection.answerProcessID(of: ":1.301", with: .failure(gone))
        var change = Self.change([("/org/example/app/size", g_variant_new_int32(7))])
        change.sender = ":1.300"
        let refusal = await Self.refusal { try await dconf.call(change) }
        #expect(refusal == PreferencesErrorName.accessDenied.busName)
        var client = InProcessClient(connection: harness.connection)
        client.sender = ":1.301"
        try await client.write("org.example.app", "other", .integer(1))
        #expect(try await client.readDomain("org.example.app") == ["other": .integer(1)])
    }

    // MARK: Helpers

    /// A call of dconf's writer for the user database.
    static func writerCall(_ member: String, body: [DBusValue]) -> DBusMessage {
        .methodCall(destination: nil, path: DconfBus.writerPath(database: "user"), interface: DconfBus.writerInterface, member: member, body: body)
    }

    /// A `Change` setting each path to its value (a floating GVariant, consumed).
    static func change(_ changes: [(path: String, value: OpaquePointer?)]) -> DBusMessage {
        writerCall(DconfBus.changeMethod, body: [.bytes(DconfChangeset.serialized(changes))])
    }

    /// The values of the service's dconf file, as dconf's engine reads them.
    static func fileValues(_ harness: InProcessService) throws -> [String: DconfValue] {
        let files = try #require(harness.dconfFiles)
        return try DconfMirror.values(inFile: [UInt8](Data(contentsOf: URL(fileURLWithPath: files.databasePath))))
    }

    /// The first `count` `Notify` signals sent on `connection` (waiting for them at most 10 s).
    static func notifies(_ connection: InMemoryConnection, count: Int) async -> [DBusMessage] {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let sent = connection.signals.filter { $0.member == DconfBus.notifySignal }
            if sent.count >= count { return sent }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return connection.signals.filter { $0.member == DconfBus.notifySignal }
    }

    /// The error name `call` was answered with; `nil` when it succeeded.
    static func refusal(_ call: () async throws -> DBusMessage) async -> String? {
        do {
            let reply = try await call()
            return reply.kind == .error ? reply.errorName : nil
        } catch let error as DBusError where error.code == .remote {
            return error.name
        } catch {
            return "\(error)"
        }
    }
}

/// A test's failure with its reason.
struct InProcessDconfError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
