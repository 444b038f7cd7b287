import BusTestSupport
import Foundation
import Testing

@testable import DBus

/// The connection's event thread: it serves libdbus's read and write watches, and a closed
/// connection gives back its thread and descriptors.
@Suite(.serialized) struct EventThreadTests {
    /// Messages larger than the socket's buffers go out in pieces: libdbus queues the rest and
    /// enables its write watch, which the event thread must serve (both the client's call,
    /// sent from the test's thread, and the server's reply, sent from its handler).
    @Test func messagesLargerThanTheSocketBufferGoBothWays() async throws {
        let fixture = try EchoFixture()
        let bytes = (0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let answer = try await fixture.call("Echo", [.bytes(bytes)], timeout: .seconds(60)).body
        #expect(answer == [.bytes(bytes)])
        // The connection still answers small calls after the large one.
        #expect(try await fixture.echo([.string("after")]) == [.string("after")])
    }

    /// 100 connections opened, used and closed leave no thread and no descriptor behind.
    @Test func closedConnectionsLeaveNoThreadOrDescriptor() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        func openAndClose() async throws {
            let connection = try DBusConnection.connect(address: bus.address)
            let reply = try await connection.call(
                .methodCall(
                    destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus.Peer",
                    member: "Ping"))
            #expect(reply.kind == .methodReturn)
            connection.close()
        }
        // Warm up what a first connection sets up once (libdbus, libdispatch's threads).
        for _ in 0..<5 { try await openAndClose() }
        let (threads, descriptors) = (Self.count("/proc/self/task"), Self.count("/proc/self/fd"))
        for _ in 0..<100 { try await openAndClose() }
        // Event threads end shortly after their connection closes.
        let settled = await eventually(timeout: .seconds(20)) {
            Self.count("/proc/self/task") <= threads + 4 && Self.count("/proc/self/fd") <= descriptors
        }
        #expect(
            settled,
            "after 100 connections: \(Self.count("/proc/self/task")) threads (were \(threads)), \(Self.count("/proc/self/fd")) descriptors (were \(descriptors))"
        )
    }

    /// The entries of a /proc directory.
    private static func count(_ directory: String) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: directory).count) ?? -1
    }
}
