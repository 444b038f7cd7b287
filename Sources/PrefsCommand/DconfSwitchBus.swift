import DBus
import Dconf
import Foundation
import PreferencesProxy
import Synchronization

/// The session bus calls that move dconf's service over (`prefs dconf-switch`) and back
/// (`prefs dconf-switch-back`): who owns a name, stopping it, starting prefsd.
final class DconfSwitchBus: Sendable {
    private let connection: DBusConnection

    /// Connects to the session bus.
    init() throws(PrefsError) {
        do {
            connection = try DBusConnection.connectToSessionBus()
        } catch {
            throw .noBus(detail: "\(error)")
        }
    }

    /// Closes the connection.
    func close() { connection.close() }

    /// The process owning a bus name, held by a ``ProcessHandle``, and its connection.
    struct Owner {
        /// The owning connection's unique name (never given to another connection).
        let uniqueName: String
        /// Its process.
        let process: ProcessHandle

        /// Whether the process is a prefsd serving `service`: one given its flag (exactly
        /// that argument: `--dconf-profile` is another option).
        func serves(_ service: SwitchSetup.Service) -> Bool { process.arguments.dropFirst().contains(service.flag) }

        /// The process, for messages: its command line and PID.
        var description: String { "\(process.commandLine) (pid \(process.pid))" }
    }

    /// The process owning `name`, or `nil` when nothing does (or it has just exited).
    func owner(of name: String) async throws(PrefsError) -> Owner? {
        do {
            let unique = try await connection.getNameOwner(name)
            let pid = try await connection.getConnectionUnixProcessID(unique)
            // Held first, then checked: its connection is still there, so the handle is of
            // the process the bus named, not of a later one given its PID.
            guard let process = ProcessHandle(pid: pid_t(pid)), try await connection.nameHasOwner(unique) else { return nil }
            return Owner(uniqueName: unique, process: process)
        } catch  where error.isRemote(named: StandardErrorName.nameHasNoOwner) {
            return nil
        } catch {
            throw .serviceUnavailable(detail: "the session bus did not say who owns \(name): \(error)")
        }
    }

    /// Makes the bus (and systemd's user manager, if one runs) read the service files again.
    func reload() async throws(PrefsError) {
        do {
            _ = try await connection.call(
                .methodCall(destination: BusDriver.name, path: BusDriver.path, interface: BusDriver.interface, member: "ReloadConfig"))
        } catch {
            throw .serviceUnavailable(detail: "the session bus did not reload its service files: \(error)")
        }
        if Self.systemdRuns {
            _ = Self.systemctl(["daemon-reload"])
        }
    }

    /// Stops `owner`, which owns `name`, and waits until it owns `name` no longer (another
    /// process may own it by then: a client calling the name starts its next owner at once)
    /// or has exited. SIGTERM first: prefsd finishes its writes, dconf's file included,
    /// before it lets go of the name. With `killing`, the process gets SIGKILL once the name
    /// has left it, or 3 s after SIGTERM, and is waited for until it has exited:
    /// dconf-service lets go of the name on SIGTERM and then stays for its idle time-out; it
    /// writes each change before answering it, so it holds nothing unwritten. `waiting` is
    /// run before each look at the name.
    func stop(_ owner: Owner, owning name: String, killing: Bool, waiting: () -> Void = {}) async throws(PrefsError) {
        owner.process.send(SIGTERM)
        let start = ContinuousClock.now
        var killed = false
        while !owner.process.hasExited {
            waiting()
            let waited = ContinuousClock.now - start
            let owns = (try? await connection.getNameOwner(name)) == owner.uniqueName
            if !owns && !killing { return }
            if killing, !killed, !owns || waited > .seconds(3) {
                owner.process.send(SIGKILL)
                killed = true
            }
            guard waited < .seconds(30) else {
                throw .serviceUnavailable(
                    detail: "\(owner.description) still \(owns ? "owns \(name)" : "runs") 30 s after SIG\(killed ? "KILL" : "TERM"); stop it and run this again"
                )
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Starts what serves `name` (the bus activates it) and returns its process ID.
    func start(_ name: String) async throws(PrefsError) -> UInt32 {
        do {
            _ = try await connection.call(
                .methodCall(
                    destination: BusDriver.name, path: BusDriver.path, interface: BusDriver.interface, member: "StartServiceByName",
                    body: [.string(name), .uint32(0)]))
            return try await connection.getConnectionUnixProcessID(name)
        } catch {
            let status = Self.exitStatus(in: error.message) ?? (Self.systemdRuns ? Self.unitExitStatus() : nil)
            let reason = status.map { "\(Self.meaning(ofExitStatus: $0)); " } ?? ""
            throw .serviceUnavailable(detail: "the bus could not start \(name): \(reason)\(error)")
        }
    }

    /// Starts prefsd as dconf's service (the bus activates it) and returns its process
    /// ID. A prefsd that will not serve dconf (it cannot take dconf's database in) owns
    /// its own name but never dconf's, and the bus would wait for it until its
    /// activation time-out: so, meanwhile, once prefsd owns its own name, its dconf
    /// writer is asked (`Init`, with no auto-start) whether it serves, and its refusal
    /// ends the wait at once, with prefsd's reason.
    func startDconf(database: String) async throws(PrefsError) -> UInt32 {
        let outcome = StartOutcome()
        let started = Task { [self] in
            do throws(PrefsError) {
                outcome.set(.success(try await start(DconfBus.busName)))
            } catch {
                outcome.set(.failure(error))
            }
        }
        var asked = DconfWriters()
        while true {
            if let result = outcome.result { return try result.get() }
            if let refusal = await dconfRefusal(database: database, writers: &asked) {
                started.cancel()
                throw .serviceUnavailable(detail: "prefsd started but does not serve dconf: \(refusal); its log says more (\(Self.logLocation))")
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    /// How a start the bus was asked for ended, once it has.
    private final class StartOutcome: Sendable {
        private let state = Mutex<Result<UInt32, PrefsError>?>(nil)

        var result: Result<UInt32, PrefsError>? { state.withLock { $0 } }

        func set(_ result: Result<UInt32, PrefsError>) { state.withLock { $0 = result } }
    }

    /// The connections of the prefsd that owns its own name: dconf's writer is on one of
    /// them (on a connection of its own until it owns dconf's name).
    private struct DconfWriters {
        var pid: UInt32?
        var uniqueNames: [String] = []
    }

    /// Why the prefsd owning its own name does not serve dconf, or `nil` when it does or
    /// cannot tell yet (it is still starting).
    private func dconfRefusal(database: String, writers: inout DconfWriters) async -> String? {
        guard let pid = try? await connection.getConnectionUnixProcessID(PreferencesBus.busName) else { return nil }
        if writers.pid != pid {
            writers = DconfWriters(pid: pid, uniqueNames: await uniqueNames(of: pid))
        }
        for uniqueName in writers.uniqueNames {
            var call = DBusMessage.methodCall(
                destination: uniqueName, path: DconfBus.writerPath(database: database), interface: DconfBus.writerInterface,
                member: DconfBus.initMethod)
            call.autoStart = false
            do {
                _ = try await connection.call(call)
                return nil
            } catch let error where error.isRemote(named: StandardErrorName.failed) && error.message.hasPrefix(DconfBus.refusalPrefix) {
                let reason = String(error.message.dropFirst(DconfBus.refusalPrefix.count))
                if reason != DconfBus.startingReason { return reason }
            } catch {
                continue
            }
        }
        return nil
    }

    /// The unique names of the connections process `pid` has on the bus.
    private func uniqueNames(of pid: UInt32) async -> [String] {
        guard
            let reply = try? await connection.call(
                .methodCall(destination: BusDriver.name, path: BusDriver.path, interface: BusDriver.interface, member: "ListNames")),
            case .array(_, let names)? = reply.body.first
        else { return [] }
        var found: [String] = []
        for case .string(let name) in names where name.hasPrefix(":") {
            if (try? await connection.getConnectionUnixProcessID(name)) == pid { found.append(name) }
        }
        return found
    }

    /// Whether systemd's user manager runs for this session.
    static var systemdRuns: Bool {
        let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"] ?? ""
        return !runtime.isEmpty && FileManager.default.fileExists(atPath: runtime + "/systemd/private")
    }

    /// Where the log of a prefsd the bus started goes: systemd's journal when systemd's user
    /// manager runs, else the bus daemon's standard error (the session's log).
    static var logLocation: String {
        systemdRuns ? "journalctl --user -u prefsd" : "the session bus's own log: prefsd writes to the standard error it was given"
    }

    /// Runs `systemctl --user ARGUMENTS`; returns what it printed, `nil` when it failed.
    private static func systemctl(_ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/systemctl")
        process.arguments = ["--user"] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return process.terminationStatus == 0 ? String(decoding: data, as: UTF8.self) : nil
    }

    /// The exit status in the bus's message about an activated process that exited
    /// (`Process /usr/bin/prefsd exited with status 74`).
    static func exitStatus(in message: String) -> Int32? {
        guard let range = message.range(of: "exited with status ") else { return nil }
        return Int32(message[range.upperBound...].prefix { $0.isNumber })
    }

    /// The exit status of prefsd's unit's last run, when systemd started it and it failed.
    private static func unitExitStatus() -> Int32? {
        systemctl(["show", "--property=ExecMainStatus", "--value", SwitchSetup.unitName])
            .flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }.flatMap { $0 == 0 ? nil : $0 }
    }

    /// What prefsd's exit status `status` means (docs/prefsd.md).
    static func meaning(ofExitStatus status: Int32) -> String {
        let what =
            switch status {
            case 64: "it was given an option it does not know (is it a prefsd without --dconf?)"
            case 69: "it could not reach the session bus"
            case 74: "its store cannot be opened, or another prefsd serves it; its log says which (\(logLocation))"
            case 75: "another prefsd owns \(PreferencesBus.busName) on this bus"
            default: "its log may say why (\(logLocation))"
            }
        return "it exited with status \(status): \(what)"
    }
}
