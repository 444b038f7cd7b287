import DBus
import Dispatch
import Synchronization

/// One writer: chains calls on its own connection until the deadline.
private final class Writer: Sendable {
    let connection: DBusConnection
    let index: Int
    let deadline: Double
    let maximum: Int
    let make: @Sendable (Int, Int) -> DBusMessage
    let done: DispatchGroup
    let completed = Atomic<Int>(0)
    let failure = Mutex<String?>(nil)
    let finishedAt = Mutex<Double>(0)

    init(
        connection: DBusConnection, index: Int, deadline: Double, maximum: Int,
        make: @escaping @Sendable (Int, Int) -> DBusMessage, done: DispatchGroup
    ) {
        self.connection = connection
        self.index = index
        self.deadline = deadline
        self.maximum = maximum
        self.make = make
        self.done = done
    }

    func next(_ n: Int) {
        connection.call(make(index, n), timeout: .seconds(120)) { result in
            if case .failure(let error) = result {
                self.failure.withLock { $0 = "\(error)" }
                self.finish()
                return
            }
            self.completed.add(1, ordering: .relaxed)
            if now() < self.deadline && n + 1 < self.maximum {
                self.next(n + 1)
            } else {
                self.finish()
            }
        }
    }

    private func finish() {
        finishedAt.withLock { $0 = now() }
        done.leave()
    }
}

/// Aggregate calls per second of `connections.count` writers, each on its own connection,
/// each waiting for its reply before its next call, for about `seconds`.
func throughput(
    _ connections: [DBusConnection], seconds: Double,
    make: @escaping @Sendable (Int, Int) -> DBusMessage
) throws -> Double {
    let group = DispatchGroup()
    let start = now()
    let writers = connections.enumerated().map { index, connection in
        Writer(
            connection: connection, index: index, deadline: start + seconds, maximum: 1_000_000,
            make: make, done: group)
    }
    for writer in writers {
        group.enter()
        writer.next(0)
    }
    guard group.wait(timeout: .now() + seconds + 300) == .success else {
        throw BenchError("writers did not finish within \(seconds + 300) s")
    }
    if let failure = writers.compactMap({ $0.failure.withLock { $0 } }).first {
        throw BenchError("a concurrent writer failed: \(failure)")
    }
    let end = writers.map { $0.finishedAt.withLock { $0 } }.max() ?? now()
    let total = writers.reduce(0) { $0 + $1.completed.load(ordering: .relaxed) }
    return Double(total) / (end - start)
}
