import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A running process held so that a signal meant for it never reaches another process that
/// was given its PID after it exited: through a pidfd (`pidfd_open`, Linux 5.3 and glibc
/// 2.36), else by its start time, checked before each signal.
final class ProcessHandle: Sendable {
    /// The process's ID.
    let pid: pid_t
    /// Its command line, one argument each.
    let arguments: [String]
    /// The pidfd, or -1 where the system has none.
    private let descriptor: Int32
    /// When it started (field 22 of `/proc/PID/stat`), which a later process of that PID
    /// does not share.
    private let startTime: String?

    /// The process `pid`, or `nil` when it has exited already.
    init?(pid: pid_t) {
        self.pid = pid
        startTime = Self.startTime(of: pid)
        descriptor = Self.pidfdOpen(pid)
        let data = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))) ?? Data()
        arguments = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        if descriptor < 0 && startTime == nil { return nil }
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// The command line as one line, for messages.
    var commandLine: String { arguments.joined(separator: " ") }

    /// Whether the process has exited.
    var hasExited: Bool {
        if descriptor >= 0 {
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            return poll(&entry, 1, 0) > 0
        }
        return Self.startTime(of: pid) != startTime
    }

    /// Sends `signal` to the process, unless it has exited.
    func send(_ signal: Int32) {
        if descriptor >= 0 {
            _ = Self.pidfdSendSignal(descriptor, signal)
        } else if let startTime, Self.startTime(of: pid) == startTime {
            kill(pid, signal)
        }
    }

    /// Field 22 of `/proc/PID/stat` (the start time), or `nil` when there is no such process.
    private static func startTime(of pid: pid_t) -> String? {
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/stat")),
            let end = data.lastIndex(of: UInt8(ascii: ")"))
        else { return nil }
        // After the command's name in parentheses come fields 3 onwards.
        let fields = data[(end + 1)...].split(separator: UInt8(ascii: " "))
        return fields.count > 19 ? String(decoding: fields[19], as: UTF8.self) : nil
    }

    /// `pidfd_open(pid, 0)`, or -1 where the C library lacks it.
    private static func pidfdOpen(_ pid: pid_t) -> Int32 {
        typealias Open = @convention(c) (pid_t, UInt32) -> Int32
        guard let symbol = dlsym(nil, "pidfd_open") else { return -1 }
        return unsafeBitCast(symbol, to: Open.self)(pid, 0)
    }

    /// `pidfd_send_signal(descriptor, signal, NULL, 0)`.
    private static func pidfdSendSignal(_ descriptor: Int32, _ signal: Int32) -> Int32 {
        typealias Send = @convention(c) (Int32, Int32, UnsafeMutableRawPointer?, UInt32) -> Int32
        guard let symbol = dlsym(nil, "pidfd_send_signal") else { return -1 }
        return unsafeBitCast(symbol, to: Send.self)(descriptor, signal, nil, 0)
    }
}
