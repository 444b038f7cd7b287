import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy
import PrefsdTestSupport
import Synchronization
import Testing

/// The events prefsd's signals feed to a client are held in a bounded
/// queue; a consumer that falls behind gets one `reloadNeeded(nil)` in place of what it
/// missed, never an unbounded backlog.
@Suite("Proxy event buffering", .timeLimit(.minutes(3)))
struct ProxyBufferingTests {
    static func change(_ index: Int) -> PreferencesEvent {
        .changed(DomainChange(domain: "com.example.Q", changed: ["k": .integer(Int64(index))], removed: [], serial: UInt32(index)))
    }

    /// Every event left in `queue` once it is finished.
    static func drain(_ queue: PreferencesEventQueue) async -> [PreferencesEvent] {
        queue.finish()
        var events: [PreferencesEvent] = []
        while let event = await queue.next() { events.append(event) }
        return events
    }

    @Test("a queue of 16 fed 10,000 events holds at most 16: a reloadNeeded(nil) in place of the dropped ones, then the newest, in order; ownerChanged is kept")
    func overflow() async {
        #expect(PreferencesEventQueue.defaultCapacity == 4096)
        let queue = PreferencesEventQueue(capacity: 16)
        for index in 1...10_000 { queue.push(Self.change(index)) }
        let events = await Self.drain(queue)
        #expect(events.count <= 17, "\(events.count) events held")
        guard case .reloadNeeded(nil, let reason)? = events.first else {
            Issue.record("the first event is not reloadNeeded(nil): \(String(describing: events.first))")
            return
        }
        #expect(reason.contains("load every domain"))
        let values = events.compactMap { event -> Int64? in
            if case .changed(let change) = event, case .integer(let value)? = change.changed["k"] { return value }
            return nil
        }
        #expect(values == values.sorted() && values.last == 10_000, "not the newest changes in order: \(values)")
        #expect(queue.overflows > 0)

        // An owner change that finds the queue full is kept after the reload event.
        let full = PreferencesEventQueue(capacity: 4)
        for index in 1...4 { full.push(Self.change(index)) }
        full.push(.ownerChanged(previous: ":1.1", current: ":1.2"))
        let kept = await Self.drain(full)
        #expect(kept.count == 2 && kept.last == .ownerChanged(previous: ":1.1", current: ":1.2"), "\(kept)")
    }

    @Test("a consumer that keeps up loses nothing; a finished queue hands out what it holds, then ends; dropping the stream ends the queue")
    func keepingUp() async {
        let queue = PreferencesEventQueue(capacity: 4)
        var iterator = queue.stream.makeAsyncIterator()
        for index in 1...100 {
            queue.push(Self.change(index))
            #expect(await iterator.next() == Self.change(index))
        }
        #expect(queue.overflows == 0)
        let ended = Mutex(false)
        do {
            let dropped = PreferencesEventQueue(capacity: 4)
            dropped.whenEnded { ended.withLock { $0 = true } }
            _ = dropped.stream
        }
        #expect(ended.withLock { $0 }, "releasing the queue and its stream did not end it")
    }

    @Test("events(in:) with a consumer that does not keep up with 6,000 changes: at most 4,096 events held, a reloadNeeded(nil) first, the newest change last")
    func slowConsumer() async throws {
        let fixture = try await ServiceFixture()
        let proxy = PreferencesProxy(connection: try fixture.connect())
        let writer = PreferencesProxy(connection: try fixture.connect())
        defer { proxy.close(); writer.close() }
        let stream = try await proxy.events(in: ["com.example.Slow"])
        // 6,000 changes from 8 writers at once (group commit keeps it quick); nothing is taken.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<8 {
                group.addTask {
                    for index in 0..<750 { try await writer.write("com.example.Slow", "k\(lane)-\(index)", .integer(Int64(index))) }
                }
            }
            try await group.waitForAll()
        }
        try await writer.write("com.example.Slow", "Sentinel", .integer(1))
        #expect(await proxy.catchUp())
        var received: [PreferencesEvent] = []
        for await event in stream {
            received.append(event)
            if case .changed(let change) = event, change.changed["Sentinel"] != nil { break }
        }
        #expect(received.count <= 4096 + 1, "\(received.count) events were held for the consumer")
        guard case .reloadNeeded(nil, _)? = received.first else {
            Issue.record("the consumer was not told to reload: first event \(String(describing: received.first))")
            return
        }
        print("proxy.buffering changes=6001 held=\(received.count)")
    }
}
