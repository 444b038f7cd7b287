import DBus
import Foundation
import Logging
import PreferencesProtocol
import PrefsdTestSupport
import Testing

@testable import PreferencesService

@Suite("Who is calling, and what it may do")
struct CallerIdentityTests {
    @Test(".flatpak-info: the [Application] name, and nothing else")
    func parsing() {
        #expect(FlatpakInfo(text: "[Application]\nname=org.example.App\nruntime=x\n")?.applicationID == "org.example.App")
        #expect(FlatpakInfo(text: "# comment\n[Instance]\nname=wrong\n\n[Application]\n name = org.example.App \n")?.applicationID == "org.example.App")
        #expect(FlatpakInfo(text: "[Runtime]\nname=org.example.Platform\n") == nil)
        #expect(FlatpakInfo(text: "[Application]\nname=\n") == nil)
        #expect(FlatpakInfo(text: "") == nil)
    }

    @Test("a process is a host process only when its root has no .flatpak-info")
    func identityFromRoot() throws {
        let proc = FileManager.default.temporaryDirectory.appendingPathComponent("proc-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: proc) }
        func root(_ pid: Int) throws -> URL {
            let root = proc.appendingPathComponent("\(pid)/root")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            return root
        }
        _ = try root(1)
        try "[Application]\nname=org.example.App\n".write(to: try root(2).appendingPathComponent(".flatpak-info"), atomically: true, encoding: .utf8)
        try "[Application]\n".write(to: try root(3).appendingPathComponent(".flatpak-info"), atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(at: try root(4).appendingPathComponent(".flatpak-info"), withIntermediateDirectories: true)

        #expect(CallerIdentity.of(processID: 1, procRoot: proc.path) == .identified(.host))
        #expect(CallerIdentity.of(processID: 2, procRoot: proc.path) == .identified(.application("org.example.App")))
        // A file naming no application, or one that cannot be read, is never "host".
        guard case .identified(.unidentified) = CallerIdentity.of(processID: 3, procRoot: proc.path) else { Issue.record("no name: not refused"); return }
        guard case .identified(.unidentified) = CallerIdentity.of(processID: 4, procRoot: proc.path) else { Issue.record("unreadable: not refused"); return }
        // A process that is gone (it called, then exited) is not taken for a host process:
        // where its call came in decides (CallerGate).
        guard case .departed = CallerIdentity.of(processID: 5, procRoot: proc.path) else { Issue.record("gone: not departed"); return }
    }

    @Test("an application may use its domain and suites and read NSGlobalDomain")
    func policy() throws {
        let app = CallerIdentity.application("org.example.App")
        #expect(app.mayWrite("org.example.App") && app.mayWrite("org.example.App.Suite") && app.mayWrite("org.example.App.a.b"))
        #expect(!app.mayWrite("org.example.AppX") && !app.mayWrite("org.example") && !app.mayWrite("NSGlobalDomain"))
        #expect(app.mayRead("NSGlobalDomain") && !app.mayRead("org.example.Other") && !app.mayRead("org.example.AppX"))
        #expect(CallerIdentity.host.mayWrite("anything"))
        #expect(!CallerIdentity.unidentified("?").mayRead("NSGlobalDomain"))
        let list = try app.admit(.lookup, [.stringArray(["org.example.Other", "org.example.App", "NSGlobalDomain"]), .string("k")])
        #expect(list == [.stringArray(["org.example.App", "NSGlobalDomain"]), .string("k")])
        #expect(
            app.filter(.domains, answer: [.stringArray(["NSGlobalDomain", "a.b", "org.example.App.S"])]) == [
                .stringArray(["NSGlobalDomain", "org.example.App.S"])
            ])
        #expect(throws: PreferencesServiceError.self) { try app.admit(.write, [.string("NSGlobalDomain"), .string("k"), .variant(.string("v"))]) }
        #expect(throws: PreferencesServiceError.self) { try CallerIdentity.unidentified("?").admit(.domains, []) }
    }

    @Test("a sender's calls wait while it is identified and then run in the order they came")
    func gateKeepsOrder() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let connection = try DBusConnection.connect(address: bus.address)
        defer { connection.close() }
        let gate = CallerGate(connection: connection, logger: Logger(label: "test"), bounds: CallerGate.Bounds(.default))
        let ran = Locked<[(Int, CallerIdentity)]>([])
        let total = 200
        try await withDeadline(.seconds(60), "all \(total) calls admitted") { (done: BoundedContinuation<Void>) in
            // All are admitted before the bus can answer who the sender is: the first asks,
            // the others are held behind it.
            for index in 0..<total {
                var call = DBusMessage.methodCall(destination: nil, path: "/", interface: nil, member: "M")
                call.sender = connection.uniqueName
                call.serial = UInt32(index + 1)
                gate.admit(call) { call, identity in
                    let count = ran.withLock { ran -> Int in
                        ran.append((Int(call.serial) - 1, identity))
                        return ran.count
                    }
                    if count == total { done.resume() }
                }
            }
        }
        #expect(ran.withLock { $0.map(\.0) } == Array(0..<total))
        #expect(ran.withLock { $0.allSatisfy { $0.1 == .host } })
        // A name that is not on the bus cannot be identified: refused.
        var stranger = DBusMessage.methodCall(destination: nil, path: "/", interface: nil, member: "M")
        stranger.sender = ":1.999999"
        let identity = try await withDeadline(.seconds(60), "the stranger's call admitted or refused") { (answer: BoundedContinuation<CallerIdentity>) in
            gate.admit(stranger) { _, identity in answer.resume(returning: identity) }
        }
        guard case .unidentified = identity else { Issue.record("a name not on the bus was taken for \(identity)"); return }
    }
}
