import BusTestSupport
import DBus
import Foundation
import Synchronization

/// A floor service started by a test, its standard input held by the test: it ends when the
/// test closes it, or at the latest when the test's process ends.
final class RunningService {
    let process = Process()
    let input = Pipe()
    let output = Pipe()
    let errors: URL

    /// Starts `executable` with `arguments`, its standard error to `log`.
    init(_ executable: String, _ arguments: [String], log: URL) throws {
        errors = log
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: errors)
        try process.run()
    }

    /// The first line of standard output, within 20 s (nil at its end, the process's or the deadline).
    func firstLine() -> String? {
        let fd = output.fileHandleForReading.fileDescriptor
        let deadline = ContinuousClock.now + .seconds(20)
        var bytes: [UInt8] = []
        while ContinuousClock.now < deadline {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) >= 0 else { return nil }
            if poller.revents == 0 {
                if !process.isRunning { return nil }
                continue
            }
            var byte: UInt8 = 0
            guard read(fd, &byte, 1) == 1 else { return nil }
            if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
        return nil
    }

    var standardError: String {
        (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
    }

    deinit { stop(process, timeout: .seconds(5)) }
}

/// The `Changed` signals of `interface` that a client connection receives, from the moment
/// ``listen(_:interface:)`` returns.
final class ChangedSignals: Sendable {
    private let received = Mutex<[DBusMessage]>([])

    /// Every signal received so far.
    var all: [DBusMessage] { received.withLock { $0 } }

    /// Starts collecting on `client`, its match rule in place on return.
    static func listen(_ client: DBusConnection, interface: String) async throws -> ChangedSignals {
        let signals = ChangedSignals()
        client.setSignalHandler { message in
            if message.interface == interface && message.member == "Changed" { signals.received.withLock { $0.append(message) } }
        }
        try await client.addMatch("type='signal',interface='\(interface)',member='Changed'")
        return signals
    }
}
