import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PrefsdTestSupport
import Testing

/// Every reliability test runs one after another: they kill, load and flood prefsd, and
/// their figures mean more when they do not share the two cores with each other.
@Suite("Reliability", .serialized)
struct Reliability {}

/// Knobs of the reliability tests.
enum Long {
    /// `PREFSD_LONG_TESTS=1` runs the long variants (more kills, more messages, longer load).
    static var enabled: Bool {
        ProcessInfo.processInfo.environment["PREFSD_LONG_TESTS"] == "1"
    }

    /// `short` in CI, `long` with `PREFSD_LONG_TESTS=1`.
    static func pick<T>(_ short: T, long: T) -> T { enabled ? long : short }
}

/// Memory figures of a process, from `/proc/<pid>/status`.
struct MemoryFigures: CustomStringConvertible {
    /// Peak resident set size (VmHWM), in KiB.
    let peakKiB: Int
    /// Resident set size now (VmRSS), in KiB.
    let currentKiB: Int

    init?(pid: Int32) {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        func field(_ name: String) -> Int? {
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return nil }
            return Int(line.split(separator: " ").dropFirst().first { Int($0) != nil } ?? "")
        }
        guard let peak = field("VmHWM"), let current = field("VmRSS") else { return nil }
        peakKiB = peak
        currentKiB = current
    }

    var peakMiB: Double { Double(peakKiB) / 1024 }

    var description: String {
        String(format: "peak_rss=%.1fMiB rss=%.1fMiB", Double(peakKiB) / 1024, Double(currentKiB) / 1024)
    }
}

extension ServiceFixture {
    /// prefsd's memory figures now.
    var memory: MemoryFigures? { pid.flatMap { MemoryFigures(pid: $0) } }

    /// `Peer.Ping` to prefsd's bus name, answered by its libdbus; throws when it does not
    /// answer within `timeout`.
    func ping(_ connection: DBusConnection, timeout: Duration = .seconds(10)) async throws {
        _ = try await connection.call(
            .methodCall(
                destination: PreferencesBus.busName, path: PreferencesBus.objectPath,
                interface: StandardInterface.peer, member: "Ping"
            ), timeout: timeout)
    }

    /// The names in the store directory.
    var storeEntries: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: storeDirectory.path)) ?? []).sorted()
    }

    /// The damaged copies moved aside in the store directory (`store.sqlite.corrupt-…`,
    /// without their `-wal`/`-shm` companions).
    var damagedCopies: [String] {
        storeEntries.filter { $0.hasPrefix("store.sqlite.corrupt-") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }
    }
}

/// Runs `PRAGMA integrity_check` with the sqlite3 tool on a closed store; returns its output.
func integrityCheck(_ database: URL) throws -> String {
    let result = try runCommand("sqlite3", [database.path, "PRAGMA integrity_check;"])
    return (result.stdout + result.stderr).trimmingCharacters(in: .whitespacesAndNewlines)
}

/// Milliseconds since `start`, for figures.
func milliseconds(since start: ContinuousClock.Instant) -> Double {
    (ContinuousClock.now - start) / .milliseconds(1)
}
