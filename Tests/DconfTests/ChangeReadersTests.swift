import DBus
import Foundation
import PrefsdTestSupport
import Synchronization
import Testing

/// Changes that come neither from dconf's `Change` nor from a plain write, as dconf's
/// readers and prefsd's own subscribers hear them on a machine serving dconf: an undo and a
/// restore, and the take-in of dconf-service's database at start.
@Suite("Every source's change reaches dconf's readers", .serialized)
struct DconfChangeReadersTests {
    @Test("an undo and a restore reach dconf's file and its clients' Notify, before a later dconf write's")
    func undoAndRestore() async throws {
        let server = try await DconfServer()
        // dconf's writes and one of prefs's, each a change of the history.
        for (key, text) in [("size", "1"), ("title", "'a'"), ("size", "2")] {
            #expect(try server.dconf(["write", "/org/example/app/\(key)", text]).status == 0)
        }
        #expect(try server.prefs("write", "org.example.app", "title", "-string", "b").status == 0)
        let seen = try WatchOutput(server)
        defer { seen.stop() }
        #expect(try seen.waitUntilSubscribed(server), "dconf watch never saw a change")

        // RevertKeyTo: the key as it was before its last change.
        let undone = try server.prefs("undo", "org.example.app", "size")
        #expect(undone.status == 0, "\(undone.stdout)\(undone.stderr)")
        // A dconf write after it: its Notify comes once dconf's file holds it, after every
        // change committed before it.
        #expect(try server.dconf(["write", "/org/example/sentinel", "1"]).status == 0)
        #expect(seen.waitFor("/org/example/sentinel\n", timeout: 10), "\(seen.text)")
        let beforeUndoSentinel = try #require(seen.text.components(separatedBy: "/org/example/sentinel\n").first)
        #expect(beforeUndoSentinel.contains("/org/example/app/size\n  1\n"), "no Notify of the undo before the later write's: \(seen.text)")
        #expect(try server.read("/org/example/app/size") == "1")

        // RevertTo: the domain as right after the change that wrote title 'a'.
        let history = try server.prefs("history", "--json", "org.example.app")
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(history.stdout.utf8)) as? [[String: Any]], "\(history)")
        let sequence = try #require(entries.first { $0["key"] as? String == "title" }?["sequence"] as? Int, "\(history.stdout)")
        let restored = try server.prefs("restore", "org.example.app", "--sequence", "\(sequence)")
        #expect(restored.status == 0, "\(restored.stdout)\(restored.stderr)")
        #expect(try server.dconf(["write", "/org/example/sentinel", "2"]).status == 0)
        #expect(seen.waitFor("/org/example/sentinel\n  2\n", timeout: 10), "\(seen.text)")
        let beforeRestoreSentinel = try #require(seen.text.components(separatedBy: "/org/example/sentinel\n  2\n").first)
        #expect(
            beforeRestoreSentinel.components(separatedBy: "/org/example/sentinel\n  1\n").last?.contains("/org/example/app/title\n  'a'\n") == true,
            "no Notify of the restore before the later write's: \(seen.text)")
        #expect(try server.read("/org/example/app/title") == "'a'")
    }

    @Test("a take-in of dconf-service's database at start is told with Changed to a client that subscribed before prefsd started")
    func takeInIsAnnounced() async throws {
        let server = try await DconfServer(startingPrefsd: false)
        #expect(try server.dconf(["write", "/org/example/app/size", "7"]).status == 0, "dconf-service wrote nothing")
        server.stopDconfService()

        // A client following prefsd's signals before prefsd runs (a match rule of its own:
        // there is no owner to ask yet).
        let listener = try server.service.connect()
        defer { listener.close() }
        let heard = Mutex<[(domain: String, keys: [String])]>([])
        listener.setSignalHandler { message in
            guard message.member == "Changed", case .string(let domain)? = message.body.first,
                message.body.count > 1, case .array(_, let entries) = message.body[1]
            else { return }
            let keys = entries.compactMap { entry -> String? in
                if case .dictEntry(.string(let key), _) = entry { return key }
                return nil
            }
            heard.withLock { $0.append((domain, keys)) }
        }
        try await listener.addMatch("type='signal',interface='io.github.prefsd.Preferences1',member='Changed'")

        try await server.startPrefsd()
        // A write once prefsd serves: its Changed comes after every one sent before.
        #expect(try server.prefs("write", "org.example.app", "sentinel", "-int", "1").status == 0)
        let sentinel = await eventually(timeout: .seconds(10)) { heard.withLock { $0.contains { $0.keys.contains("sentinel") } } }
        let signals = heard.withLock { $0 }
        #expect(sentinel, "\(signals)")
        let taken = signals.prefix { !$0.keys.contains("sentinel") }
        #expect(taken.contains { $0.domain == "org.example.app" && $0.keys.contains("size") }, "the take-in sent no Changed: \(signals)")
        #expect(try server.prefs("read", "org.example.app", "size").stdout == "7\n")
    }
}
