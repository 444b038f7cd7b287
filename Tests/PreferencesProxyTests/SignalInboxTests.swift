import Foundation
import Synchronization
import Testing

@testable import PreferencesProxy

/// The ordered inbox the signal router delivers through.
@Suite struct SignalInboxTests {
    @Test("items are handled in order; a held item holds the next back, and a barrier runs after both")
    func heldItemKeepsOrder() async throws {
        let inbox = SignalInbox<Int>(label: "test.inbox")
        let handled = Mutex<[Int]>([])
        let release = Mutex<(@Sendable () -> Void)?>(nil)
        inbox.setHandler { item, resume in
            guard item == 1 else {
                handled.withLock { $0.append(item) }
                return .next
            }
            // Finished later, as a re-read is: 2 must wait for it.
            release.withLock { $0 = { resume { handled.withLock { $0.append(1) } } } }
            return .held
        }
        inbox.put(1)
        inbox.put(2)
        let held = await withCheckedContinuation { continuation in
            // A barrier put in now runs only after 1 and 2.
            inbox.afterHandled { continuation.resume(returning: handled.withLock { $0 }) }
            // Wait (bounded) for 1 to be held, then release it.
            let deadline = ContinuousClock.now + .seconds(10)
            while release.withLock({ $0 }) == nil, ContinuousClock.now < deadline { usleep(1000) }
            #expect(handled.withLock { $0 }.isEmpty, "2 was handled while 1 was held")
            release.withLock { $0 }?()
        }
        #expect(held == [1, 2])
    }

    @Test("after close nothing is handled and a barrier runs at once")
    func closed() async {
        let inbox = SignalInbox<Int>(label: "test.inbox.closed")
        let handled = Mutex<[Int]>([])
        inbox.setHandler { item, _ in
            handled.withLock { $0.append(item) }
            return .next
        }
        inbox.close()
        inbox.put(1)
        await withCheckedContinuation { continuation in inbox.afterHandled { continuation.resume() } }
        #expect(handled.withLock { $0 }.isEmpty)
    }
}
