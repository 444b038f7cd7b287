import Foundation
import PreferencesProtocol
import PreferencesProxy
import PrefsdTestSupport

/// `dbus-monitor` on a test's private bus, recording the method calls one connection sends
/// to prefsd: which members, on which domains.
final class CallMonitor: Sendable {
    /// One call seen: its member and its first argument when that is a string (the domain).
    struct Call: Equatable {
        let member: String
        let domain: String?
    }

    private let process: Process
    private let output: URL
    private let consumed = Locked(0)
    private let sentinels = Locked(0)

    /// Starts `dbus-monitor` for the method calls `sender` sends to prefsd.
    init(bus: PrivateBus, sender: String) throws {
        output = bus.directory.appendingPathComponent("monitor-\(UUID().uuidString).txt")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        process = Process()
        process.environment = helperEnvironment
        process.executableURL = URL(fileURLWithPath: try findExecutable("dbus-monitor"))
        process.arguments = [
            "--address", bus.address,
            "type='method_call',sender='\(sender)',destination='\(PreferencesBus.busName)'",
        ]
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    /// Sends sentinel reads through `proxy` until the monitor shows one: it is listening.
    func waitUntilListening(_ proxy: PreferencesProxy) async throws {
        let listening = await eventually(timeout: .seconds(30)) {
            (try? await calls(until: proxy, timeout: .milliseconds(500))) != nil
        }
        if !listening { throw FixtureError("dbus-monitor showed no call within 30 s") }
    }

    /// The calls seen since the last call of this method, up to a sentinel `Read` sent now
    /// through `proxy` (calls on one connection reach the bus in order). Throws when the
    /// sentinel does not show within `timeout`.
    func calls(until proxy: PreferencesProxy, timeout: Duration = .seconds(30)) async throws -> [Call] {
        let sentinel = "io.github.prefsd.Sentinel\(sentinels.withLock { $0 += 1; return $0 })"
        _ = try? await proxy.read(sentinel, "k")
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let all = parsed()
            let start = consumed.withLock { $0 }
            if let end = all.indices.dropFirst(start).first(where: { all[$0].domain == sentinel }) {
                consumed.withLock { $0 = end + 1 }
                return Array(all[start..<end]).filter { !($0.domain ?? "").hasPrefix("io.github.prefsd.Sentinel") }
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw FixtureError(
            "dbus-monitor did not show the sentinel \(sentinel); it printed:\n\(((try? String(contentsOf: output, encoding: .utf8)) ?? "").suffix(2000))")
    }

    /// The members of the reads (`Read…`) of `domain` among ``calls(until:timeout:)``: the
    /// proxy's own writes are left out.
    func reads(until proxy: PreferencesProxy, of domain: String) async throws -> [String] {
        try await calls(until: proxy).filter { $0.domain == domain && $0.member.hasPrefix("Read") }.map(\.member)
    }

    /// Every call in the monitor's output so far, in order.
    private func parsed() -> [Call] {
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        var calls: [Call] = []
        var member: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("method call ") {
                if let member { calls.append(Call(member: member, domain: nil)) }
                member = line.split(separator: " ").first { $0.hasPrefix("member=") }.map { String($0.dropFirst("member=".count)) }
            } else if let current = member {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.hasPrefix("string \""), trimmed.hasSuffix("\"") {
                    calls.append(Call(member: current, domain: String(trimmed.dropFirst("string \"".count).dropLast())))
                } else {
                    calls.append(Call(member: current, domain: nil))
                }
                member = nil
            }
        }
        return calls
    }

    /// Ends the monitor.
    func stop() {
        BusTestSupport.stop(process, signal: SIGKILL)
    }
}
