import DBus
import Dispatch
import Foundation
import Logging
import PreferencesProtocol
import PrefsdTestSupport
import Testing

@testable import PreferencesService

/// Application IDs as Flatpak has them, reserved domains, a
/// `.flatpak-info` that would block, and the calls held while a sender is identified.
@Suite("Identification resists hostile roots and floods")
struct IdentificationHardeningTests {
    @Test("application IDs are valid only as Flatpak has them")
    func applicationIDs() {
        for valid in [
            "org.example.App", "io.github.prefsd.Portal", "org.example.App-Devel", "org.example.My_App",
            "_a.b.c", "org.example.-x", "org.freedesktop.appearance", String(repeating: "a.", count: 127) + "b",
        ] {
            #expect(FlatpakInfo.problem(withApplicationID: valid) == nil, "\(valid)")
        }
        for invalid in [
            "NSGlobalDomain", "org.example", "", ".org.example.App", "org.example.App.", "org..example.App",
            "org.1example.App", "org-x.example.App", "org.example.Äpp", "org.example.App/x", "org.example.App x",
            String(repeating: "a.", count: 128) + "b",
        ] {
            #expect(FlatpakInfo.problem(withApplicationID: invalid) != nil, "\(invalid)")
        }
    }

    @Test("a .flatpak-info naming an invalid application ID makes the caller unidentified, with the reason")
    func invalidIDRefused() throws {
        let proc = try FakeProc()
        try proc.info(pid: 1, "[Application]\nname=NSGlobalDomain\n")
        guard case .identified(.unidentified(let reason)) = CallerIdentity.of(processID: 1, procRoot: proc.path) else {
            Issue.record("name=NSGlobalDomain was taken for an application")
            return
        }
        #expect(reason.contains("NSGlobalDomain") && reason.contains("not a Flatpak application ID"), "\(reason)")
    }

    @Test("no sandboxed application may use a reserved domain, whatever its ID")
    func reservedDomains() throws {
        for id in ["io.github.prefsd.Portal", "io.github.prefsd", "org.freedesktop.appearance"] {
            let app = CallerIdentity.application(id)
            for domain in ["io.github.prefsd.Portal", "io.github.prefsd", "io.github.prefsd.Anything", "org.freedesktop.appearance", "NSGlobalDomain"] {
                #expect(!app.mayWrite(domain), "\(id) may write \(domain)")
                #expect(app.mayRead(domain) == (domain == "NSGlobalDomain"), "\(id) reading \(domain)")
            }
            #expect(throws: PreferencesServiceError.accessDenied(app.refusal(reading: id))) {
                try app.admit(.write, [.string(id), .string("k"), .variant(.string("v"))])
            }
            #expect(app.refusal(reading: id).contains("whatever its ID"))
        }
        // Only the reserved names: an application's own suites and other applications of
        // those namespaces keep their rights, and the host keeps everything.
        #expect(CallerIdentity.application("org.freedesktop.Bustle").mayWrite("org.freedesktop.Bustle"))
        #expect(CallerIdentity.application("io.github.prefsdx.App").mayWrite("io.github.prefsdx.App"))
        #expect(CallerIdentity.host.mayWrite("io.github.prefsd.Portal") && CallerIdentity.host.mayWrite("org.freedesktop.appearance"))
        // The suite rule stays: X may use X.Devel, as Flatpak lets X own the bus names X.*.
        #expect(CallerIdentity.application("org.example.App").mayWrite("org.example.App.Devel"))
    }

    @Test("a FIFO, a symbolic link or an oversized file at .flatpak-info is refused at once, never waited on")
    func hostileFiles() async throws {
        let proc = try FakeProc()
        let fifo = try proc.root(pid: 1).appendingPathComponent(".flatpak-info").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let elsewhere = proc.directory.appendingPathComponent("info")
        try "[Application]\nname=org.example.App\n".write(to: elsewhere, atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(
            atPath: try proc.root(pid: 2).appendingPathComponent(".flatpak-info").path,
            withDestinationPath: elsewhere.path)
        try proc.info(pid: 3, "[Application]\nname=org.example.App\n" + String(repeating: "#\n", count: 40_000))

        // Read on a thread of its own with a deadline: the old code blocked in open() until
        // a writer came, which the test then plays to let it go.
        let answer = Locked<Identification?>(nil)
        Thread.detachNewThread {
            let result = CallerIdentity.of(processID: 1, procRoot: proc.path); answer.withLock { $0 = result }
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while answer.withLock({ $0 }) == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        if answer.withLock({ $0 }) == nil {
            let writer = open(fifo, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
            Issue.record("reading a FIFO .flatpak-info did not return within 5 s")
            return
        }
        guard case .identified(.unidentified(let reason))? = answer.withLock({ $0 }) else {
            Issue.record("a FIFO was taken for \(String(describing: answer.withLock { $0 }))")
            return
        }
        #expect(reason.contains("not a regular file but a FIFO"), "\(reason)")
        guard case .identified(.unidentified(let link)) = CallerIdentity.of(processID: 2, procRoot: proc.path) else {
            Issue.record("a symbolic link was followed")
            return
        }
        #expect(link.contains("symbolic link"), "\(link)")
        guard case .identified(.unidentified(let large)) = CallerIdentity.of(processID: 3, procRoot: proc.path) else {
            Issue.record("a file over 64 KiB was read")
            return
        }
        #expect(large.contains("over the limit of 65536"), "\(large)")
    }

    @Test("a FIFO .flatpak-info stalls no other client's identification")
    func fifoStallsNoOne() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let proc = try FakeProc()
        // Every connection of this test is this process: its fake root holds a FIFO.
        let fifo = try proc.root(pid: UInt32(getpid())).appendingPathComponent(".flatpak-info").path
        #expect(mkfifo(fifo, 0o600) == 0)
        defer {
            // Lets an old prefsd's blocked open() go, so no thread is left behind.
            let writer = open(fifo, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
        }
        let first = try DBusConnection.connect(address: bus.address)
        defer { first.close() }
        let second = try DBusConnection.connect(address: bus.address)
        defer { second.close() }
        let gate = CallerGate(connection: first, logger: Logger(label: "test"), procRoot: proc.path, bounds: CallerGate.Bounds(.default))
        for connection in [first, second] {
            let identity = try await Self.admitted(gate, sender: connection.uniqueName, within: .seconds(5))
            guard case .unidentified(let reason) = identity else { Issue.record("taken for \(identity)"); return }
            #expect(reason.contains("FIFO"), "\(reason)")
        }
    }

    @Test("a process root that does not answer holds up no other client, and is given up after the time-out")
    func stalledRead() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let first = try DBusConnection.connect(address: bus.address)
        defer { first.close() }
        let second = try DBusConnection.connect(address: bus.address)
        defer { second.close() }
        let stall = DispatchSemaphore(value: 0)
        defer { stall.signal() }
        let reads = Locked(0)
        // The first read blocks (as on a FUSE root whose server never answers); later ones answer.
        let gate = CallerGate(
            connection: first, logger: Logger(label: "test"),
            bounds: CallerGate.Bounds(heldCalls: 8, heldBytes: 1 << 20, readTimeout: .seconds(2)),
            reader: { _ in
                if reads.withLock({
                    $0 += 1; return $0
                }) == 1 {
                    stall.wait()
                }
                return .identified(.host)
            })
        let stalled = Locked<CallerIdentity?>(nil)
        _ = gate.admit(Self.call(from: first.uniqueName)) { _, identity in stalled.withLock { $0 = identity } }
        let started = ContinuousClock.now
        try await Self.waitUntil { reads.withLock { $0 } == 1 }
        // Another client is identified and answered while the first read still hangs.
        #expect(try await Self.admitted(gate, sender: second.uniqueName, within: .seconds(5)) == .host)
        #expect(stalled.withLock { $0 } == nil || ContinuousClock.now - started >= .seconds(2))
        // The stalled one is let go after the time-out, refused.
        try await Self.waitUntil(.seconds(10)) { stalled.withLock { $0 } != nil }
        guard case .unidentified(let reason)? = stalled.withLock({ $0 }) else {
            Issue.record("stalled: \(String(describing: stalled.withLock { $0 }))"); return
        }
        #expect(reason.contains("took longer than"), "\(reason)")
        #expect(ContinuousClock.now - started >= .seconds(2))
    }

    @Test("calls held while a sender is identified are bounded by count and by bytes; the excess is refused")
    func heldCallsBounded() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let first = try DBusConnection.connect(address: bus.address)
        defer { first.close() }
        let second = try DBusConnection.connect(address: bus.address)
        defer { second.close() }
        let third = try DBusConnection.connect(address: bus.address)
        defer { third.close() }
        let stall = DispatchSemaphore(value: 0)
        let gate = CallerGate(
            connection: first, logger: Logger(label: "test"),
            bounds: CallerGate.Bounds(heldCalls: 4, heldBytes: 5_000, readTimeout: .seconds(60)),
            reader: { _ in
                stall.wait(); return .identified(.host)
            })
        let ran = Locked<[String]>([])
        func admit(_ sender: String, _ tag: String, padding: Int = 0) -> String? {
            var call = Self.call(from: sender)
            call.body = [.string(tag), .string(String(repeating: "x", count: padding))]
            return gate.admit(call) { call, _ in ran.withLock { $0.append(call.body.first?.stringValue ?? "?") } }
        }
        // By count: 4 held, the 6 more refused, each with a reason naming the flag.
        let refusals = (0..<10).map { admit(first.uniqueName, "a\($0)") }
        #expect(refusals.prefix(4).allSatisfy { $0 == nil })
        #expect(refusals.dropFirst(4).allSatisfy { $0?.contains("--max-held-calls") == true }, "\(refusals)")
        // By bytes: beside a call of 3,000 bytes, another would pass the 5,000: refused; a
        // small one still fits.
        #expect(admit(second.uniqueName, "b0", padding: 3_000) == nil)
        #expect(admit(second.uniqueName, "b1", padding: 3_000)?.contains("--max-held-size") == true)
        #expect(admit(second.uniqueName, "b2", padding: 100) == nil)
        // A first call over the bound is held all the same (it is in memory already); the
        // next one is not.
        #expect(admit(third.uniqueName, "c0", padding: 10_000) == nil)
        #expect(admit(third.uniqueName, "c1")?.contains("--max-held-size") == true)
        for _ in 0..<3 { stall.signal() }
        try await Self.waitUntil { ran.withLock { $0.count } == 7 }
        let order = ran.withLock { $0 }
        #expect(order.filter { $0.hasPrefix("a") } == ["a0", "a1", "a2", "a3"])
        #expect(order.filter { $0.hasPrefix("b") } == ["b0", "b2"])
        #expect(order.filter { $0.hasPrefix("c") } == ["c0"])
        // Once known, a sender's calls are no longer held, so no bound applies.
        #expect((0..<20).allSatisfy { admit(first.uniqueName, "d\($0)") == nil })
    }

    // MARK: Helpers

    /// A fake `/proc` whose processes' roots the test makes.
    struct FakeProc {
        let directory: URL
        var path: String { directory.path }

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("proc-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }

        /// The root of process `pid`, made.
        func root(pid: UInt32) throws -> URL {
            let root = directory.appendingPathComponent("\(pid)/root")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            return root
        }

        /// Writes `text` as the `.flatpak-info` of process `pid`.
        func info(pid: UInt32, _ text: String) throws {
            try text.write(to: try root(pid: pid).appendingPathComponent(".flatpak-info"), atomically: true, encoding: .utf8)
        }
    }

    /// A call as if sent by `sender`.
    static func call(from sender: String) -> DBusMessage {
        var call = DBusMessage.methodCall(destination: nil, path: "/", interface: nil, member: "M")
        call.sender = sender
        call.serial = 1
        return call
    }

    /// The identity the gate gives a call of `sender`, which must come within `timeout`.
    static func admitted(_ gate: CallerGate, sender: String, within timeout: Duration) async throws -> CallerIdentity {
        let answer = Locked<CallerIdentity?>(nil)
        _ = gate.admit(call(from: sender)) { _, identity in answer.withLock { $0 = identity } }
        try await waitUntil(timeout) { answer.withLock { $0 } != nil }
        return answer.withLock { $0 } ?? .unidentified("?")
    }

    /// Waits until `condition` holds, at most `timeout` (a bound for a stalled machine).
    static func waitUntil(_ timeout: Duration = .seconds(10), _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else { throw FixtureError("the condition awaited did not hold within \(timeout)") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}
