import Foundation
import Preferences
import PreferencesModel
import PrefsdTestSupport
import Testing

@Suite("Change observation")
struct ObservationTests {
    @Test("a write in another process reaches this process's getter and observer")
    func otherProcess() async throws {
        let fixture = try await ServiceFixture()
        let preferences = fixture.preferences("com.example.Shared")
        #expect(preferences.string(forKey: "Color") == nil)
        let seen = Locked<[PropertyListValue?]>([])
        let observation = preferences.observe("Color") { value in seen.withLock { $0.append(value) } }
        let write = try fixture.probe(["write", "com.example.Shared", "Color", "blue"])
        #expect(write.status == 0, "\(write.stderr)")
        #expect(await eventually { preferences.string(forKey: "Color") == "blue" })
        #expect(await eventually { seen.withLock { $0 } == [.string("blue")] })
        observation.cancel()
        // A sentinel observer of the same key, made after the cancel: observers are called in
        // order, so once it has seen "red" the cancelled one would have been called too.
        let sentinel = Locked<[PropertyListValue?]>([])
        let sentinelObservation = preferences.observe("Color") { value in sentinel.withLock { $0.append(value) } }
        _ = try fixture.probe(["write", "com.example.Shared", "Color", "red"])
        #expect(await eventually { preferences.string(forKey: "Color") == "red" })
        #expect(await eventually { sentinel.withLock { $0 } == [.string("red")] })
        #expect(seen.withLock { $0 } == [.string("blue")], "a cancelled observation is not called")
        sentinelObservation.cancel()
    }

    @Test("a write in this process reaches another process's getter and observer")
    func toOtherProcess() async throws {
        let fixture = try await ServiceFixture()
        let output = fixture.bus.directory.appendingPathComponent("watch.txt")
        let watcher = try fixture.startProbe(["watch", "com.example.Shared", "Size", "2"], output: output)
        defer { if watcher.isRunning { watcher.terminate() } }
        #expect(await eventually { ((try? String(contentsOf: output, encoding: .utf8)) ?? "").contains("ready") })
        let preferences = fixture.preferences("com.example.Shared")
        preferences.set(12, forKey: "Size")
        #expect(preferences.synchronize())
        preferences.set(14, forKey: "Size")
        #expect(preferences.synchronize())
        #expect(await eventually { !watcher.isRunning })
        let lines = ((try? String(contentsOf: output, encoding: .utf8)) ?? "").split(separator: "\n")
        #expect(lines == ["ready", "Size=12", "Size=14"])
        #expect(try fixture.probe(["read", "com.example.Shared", "Size"]).stdout == "14\n")
    }

    @Test("observers fire only when the effective value changes")
    func effectiveOnly() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        let preferences = fixture.preferences("com.example.Effective", arguments: ["-Shadowed", "argument"])
        let seen = Locked<[String]>([])
        let observations = ["Shadowed", "Global", "Sentinel"].map { key in
            preferences.observe(key) { value in seen.withLock { $0.append("\(key)=\(value.map { "\($0)" } ?? "nil")") } }
        }
        try await client.write("com.example.Effective", "Shadowed", .string("app"))  // hidden by the argument domain
        try await client.write("NSGlobalDomain", "Global", .integer(1))  // visible
        try await client.write("com.example.Effective", "Global", .integer(1))  // same effective value
        try await client.write("com.example.Effective", "Global", .integer(2))  // changes it
        try await client.write("com.example.Effective", "Sentinel", .integer(1))  // last: everything before it is in
        #expect(await eventually { seen.withLock { $0.last } == "Sentinel=1" })
        #expect(seen.withLock { $0 } == ["Global=1", "Global=2", "Sentinel=1"])
        _ = observations
    }

    @Test("didChangeNotification and the changes sequence")
    func notificationAndSequence() async throws {
        let fixture = try await ServiceFixture()
        let preferences = fixture.preferences("com.example.Notify")
        let notified = Locked(0)
        let token = NotificationCenter.default.addObserver(forName: Preferences.didChangeNotification, object: preferences, queue: nil) { _ in
            notified.withLock { $0 += 1 }
        }
        defer { NotificationCenter.default.removeObserver(token) }
        let changes = preferences.changes
        let firstTwo = Task {
            var collected: [PreferencesChange] = []
            for await change in changes {
                collected.append(change)
                if collected.count == 2 { break }
            }
            return collected
        }
        _ = try fixture.probe(["write", "com.example.Notify", "A", "1"])
        _ = try fixture.probe(["write", "NSGlobalDomain", "B", "2"])
        defer { firstTwo.cancel() }
        let collected = try await withDeadline(.seconds(30), "two changes") { await firstTwo.value }
        #expect(collected == [PreferencesChange(key: "A", value: .string("1")), PreferencesChange(key: "B", value: .string("2"))])
        #expect(await eventually { notified.withLock { $0 } == 2 })
    }

    @Test("a change to the forced keys reaches the cache")
    func forcedChanges() async throws {
        let directory = try ServiceFixture.managedDirectory([:])
        defer { try? FileManager.default.removeItem(at: directory) }
        let fixture = try await ServiceFixture(arguments: ["--managed-dir", directory.path, "--allow-unowned-managed-dir"])
        let preferences = fixture.preferences("com.example.Lab", arguments: ["-Proxy", "mine"])
        #expect(preferences.string(forKey: "Proxy") == "mine")
        try PropertyListValue.dictionary(["Proxy": .string("lab")]).xmlPropertyListData()
            .write(to: directory.appendingPathComponent("com.example.Lab.plist"))
        let forced = await eventually { preferences.string(forKey: "Proxy") == "lab" }
        #expect(forced, "prefsd log: \(fixture.log)")
        #expect(preferences.objectIsForced(forKey: "Proxy"))
        try FileManager.default.removeItem(at: directory.appendingPathComponent("com.example.Lab.plist"))
        #expect(await eventually { preferences.string(forKey: "Proxy") == "mine" })
    }
}
