import DBus
import Foundation
import PreferencesModel
import Testing
@testable import Preferences

/// The merging of one domain's writes, without a bus.
@Suite("WriteLane")
struct WriteLaneTests {
    let domain = try! DomainName("com.example.Lane")

    func key(_ name: String, _ value: PropertyListValue?, _ generation: UInt64) -> LaneItem {
        .key(name, PendingKey(value: value, generation: generation))
    }

    func keys(_ step: WriteLane.Step) -> [String: PendingKey]? {
        guard case .send(let operation) = step, case .keys(let batch) = operation.payload else { return nil }
        return batch
    }

    @Test("writes made while one is in flight merge into one batch, the last value of a key winning")
    func merging() {
        var lane = WriteLane()
        let start = ContinuousClock.now
        let first = lane.merge(key("Width", .integer(1), 1))
        #expect(first == false)
        let sent = lane.next(now: start, flushing: false)
        #expect(keys(sent)?["Width"]?.value == .integer(1), "the first goes at once")
        let second = lane.merge(key("Width", .integer(2), 2))
        #expect(second == false, "a new batch starts behind the one in flight")
        for generation in 3...1000 {
            let merged = lane.merge(key("Width", .integer(Int64(generation)), UInt64(generation)))
            #expect(merged)
        }
        let mergedRemoval = lane.merge(key("Height", nil, 1001))
        #expect(mergedRemoval)
        #expect(lane.queue.count == 1)
        let inFlight = lane.next(now: start, flushing: false)
        if case .nothing = inFlight {} else { Issue.record("nothing is sent while one is in flight") }
        lane.busy = false
        let next = lane.next(now: start + .seconds(1), flushing: false)
        let batch = keys(next)
        #expect(batch?.count == 2)
        #expect(batch?["Width"]?.value == .integer(1000) && batch?["Width"]?.generation == 1000)
        #expect(batch?["Height"].map { $0.value == nil } == true)
    }

    @Test("a batch waits for the interval unless synchronize() flushes")
    func interval() {
        var lane = WriteLane()
        let start = ContinuousClock.now
        _ = lane.merge(key("A", .integer(1), 1))
        _ = lane.next(now: start, flushing: false)
        lane.busy = false
        _ = lane.merge(key("A", .integer(2), 2))
        let second = lane.next(now: start + .milliseconds(5), flushing: false)
        guard case .wait(let delay) = second else {
            Issue.record("the second batch should wait")
            return
        }
        #expect(delay == WriteLane.interval - .milliseconds(5))
        let again = lane.next(now: start + .milliseconds(6), flushing: false)
        if case .nothing = again {} else { Issue.record("one timer at a time") }
        let flushed = lane.next(now: start + .milliseconds(6), flushing: true)
        #expect(keys(flushed)?["A"]?.value == .integer(2))
    }

    @Test("a whole-domain call is never merged and keeps its place in the order")
    func calls() {
        var lane = WriteLane()
        let message = DBusMessage.methodCall(destination: "d.e", path: "/d", interface: "d.e", member: "RemoveDomain", body: [])
        lane.busy = true
        _ = lane.merge(key("A", .integer(1), 1))
        let call = lane.merge(.call(message, answered: { _ in }))
        #expect(call == false)
        let after = lane.merge(key("B", .integer(1), 2))
        #expect(after == false, "a key after the call starts a new batch")
        #expect(lane.queue.count == 3)
    }

    @Test("a refused batch is split into single keys sent at once, never merged into")
    func split() {
        var lane = WriteLane()
        let start = ContinuousClock.now
        lane.busy = true
        _ = lane.merge(key("A", .integer(1), 1))
        _ = lane.merge(key("B", .integer(2), 2))
        lane.busy = false
        guard case .send(let batch) = lane.next(now: start, flushing: false) else {
            Issue.record("not sent")
            return
        }
        lane.busy = false
        let split = lane.split(batch)
        #expect(split == 2)
        let queued = lane.merge(key("C", .integer(3), 3))
        #expect(queued == false)
        let alone = lane.next(now: start, flushing: false)
        #expect(keys(alone).map { Array($0.keys) } == ["A"], "at once, despite the interval")
        lane.busy = false
        let second = lane.next(now: start, flushing: false)
        #expect(keys(second).map { Array($0.keys) } == ["B"])
    }

    @Test("one key batch is a Write or a Remove, several an Apply")
    func messages() {
        let write = WriteLane.Operation(payload: .keys(["A": PendingKey(value: .integer(1), generation: 1)]))
        #expect(write.message(domain).member == "Write")
        let remove = WriteLane.Operation(payload: .keys(["A": PendingKey(value: nil, generation: 1)]))
        #expect(remove.message(domain).member == "Remove")
        let apply = WriteLane.Operation(payload: .keys([
            "A": PendingKey(value: .integer(1), generation: 1), "B": PendingKey(value: nil, generation: 2),
        ]))
        let message = apply.message(domain)
        #expect(message.member == "Apply")
        #expect(message.body.count == 3 && message.body[2] == .stringArray(["B"]))
    }
}
