import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy
import PrefsdTestSupport
import Testing

/// Contract 0.3, History: every committed change journalled with who made it; `History`,
/// `RevertTo` (and `RevertKeyTo`), `prefs history`, `prefs undo`, `prefs restore`.
@Suite("History: who changed what, undo and restore")
struct HistoryTests {
    static let nfc = "caf\u{E9}"
    static let nfd = "cafe\u{301}"

    /// The journal's entries of `domain` (of `key` unless `""`).
    private func history(_ client: ServiceClient, _ domain: String, key: String = "", after: UInt64 = 0) async throws -> [HistoryEntry] {
        try await client.perform(PreferencesCall.history(domain, key: key, after: after))
    }

    /// The name of this test program, as `/proc/self/exe` gives it.
    private var programName: String {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().lastPathComponent
    }

    @Test("who: prefs is `prefs`, a Swift program is its program's name; entries carry new and previous values")
    func whoAndEntries() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        let domain = "com.example.History"
        #expect(try fixture.prefs("write", domain, "Font", "-int", "12").status == 0)
        try await client.write(domain, "Font", .integer(14))
        try await client.perform(PreferencesCall.apply(domain, set: ["Name": .string("n")], remove: ["Font"]))
        // Volatile domains are not recorded; a write that changes nothing is no change.
        try await client.perform(PreferencesCall.setVolatileDomain(domain, ["Font": .integer(99)]))
        try await client.write(domain, "Name", .string("n"))

        let entries = try await history(client, domain)
        #expect(entries.map(\.key) == ["Font", "Font", "Font", "Name"])
        #expect(entries.map(\.who) == ["prefs", programName, programName, programName])
        #expect(entries[0].previous == nil && entries[0].value == .integer(12))
        #expect(entries[1].previous == .integer(12) && entries[1].value == .integer(14))
        #expect(entries[2].previous == .integer(14) && entries[2].value == nil, "a removal keeps the previous value")
        #expect(entries[2].sequence == entries[3].sequence, "one Apply is one change")
        #expect(entries[0].sequence < entries[1].sequence && entries[1].sequence < entries[2].sequence)
        #expect(entries.allSatisfy { abs(Double($0.time) / 1e6 - Date().timeIntervalSince1970) < 300 })
        #expect(try await history(client, domain, key: "Name").count == 1)
        #expect(try await history(client, domain, after: entries[1].sequence).count == 2)

        // prefs history --json: the issue's fields, previous absent where there was none.
        let json = try fixture.prefs("history", domain, "--json")
        #expect(json.status == 0, "\(json.stderr)")
        let objects = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(objects.count == 4)
        #expect(objects[0]["who"] as? String == "prefs" && objects[0]["previous"] == nil && objects[0]["removed"] as? Bool == false)
        #expect(objects[2]["removed"] as? Bool == true && objects[2]["value"] == nil && objects[2]["previous"] as? Int == 14)
        #expect(
            (objects[0]["time"] as? String).flatMap {
                ISO8601DateFormatter().date(from: $0.replacingOccurrences(of: #"\.\d+"#, with: "", options: .regularExpression))
            } != nil)
        let lines = try fixture.prefs("history", domain, "Font", "--limit", "1")
        #expect(lines.stdout.split(separator: "\n").count == 1 && lines.stdout.contains("14 → (removed)"), "\(lines)")
    }

    @Test("undo and restore put back the exact bytes (NFD text, -0.0, nested values) across a restart, as who = restore")
    func exactBytesAcrossRestart() async throws {
        let fixture = try await ServiceFixture()
        let domain = "com.example.Exact"
        let nested: PropertyListValue = .dictionary(["a": .array([.dictionary(["r": .real(-0.0), "s": .string(Self.nfd)])])])
        var client = ServiceClient(connection: try fixture.connect())
        try await client.write(domain, "Text", .string(Self.nfd))
        try await client.write(domain, "Real", .real(-0.0))
        try await client.write(domain, "Nested", nested)
        let before = try await history(client, domain).last?.sequence ?? 0
        try await client.write(domain, "Text", .string(Self.nfc))
        try await client.write(domain, "Real", .real(0.0))
        try await client.write(domain, "Nested", .dictionary(["a": .array([.dictionary(["r": .real(0.0), "s": .string(Self.nfc)])])]))

        #expect(fixture.stopService() == 0)
        try await fixture.startService()
        client = ServiceClient(connection: try fixture.connect())

        // prefs undo DOMAIN KEY: the key's last change only.
        #expect(try fixture.prefs("undo", domain, "Text").status == 0)
        #expect(try await client.readValue(domain, "Text").encoded() == PropertyListValue.string(Self.nfd).encoded())
        #expect(try await client.readValue(domain, "Real").encoded() == PropertyListValue.real(0.0).encoded())

        // prefs restore --sequence: every key back as it was then, byte for byte.
        #expect(try fixture.prefs("restore", domain, "--sequence", String(before)).status == 0)
        #expect(try await client.readValue(domain, "Real").encoded() == PropertyListValue.real(-0.0).encoded())
        #expect(try await client.readValue(domain, "Nested").encoded() == nested.encoded())
        let entries = try await history(client, domain)
        #expect(entries.suffix(3).allSatisfy { $0.who == "restore" }, "\(entries.map(\.who))")
        #expect(Set(entries.suffix(2).map(\.sequence)).count == 1, "a restore is one change")

        // The restore is a change like any other: undone in turn, across another restart.
        #expect(fixture.stopService() == 0)
        try await fixture.startService()
        client = ServiceClient(connection: try fixture.connect())
        #expect(try fixture.prefs("undo", domain).status == 0)
        #expect(try await client.readValue(domain, "Real").encoded() == PropertyListValue.real(0.0).encoded())
        #expect(try await client.readValue(domain, "Text").encoded() == PropertyListValue.string(Self.nfd).encoded())

        // Back to before every recorded change: the domain is gone.
        try await client.perform(PreferencesCall.revertTo(domain, sequence: 0))
        #expect(try await client.domains().contains(domain) == false)
    }

    @Test("a managed file's change is recorded as who = managed, and a revert leaves forced keys alone")
    func managed() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-managed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fixture = try await ServiceFixture(arguments: ["--managed-dir", directory.path, "--allow-unowned-managed-dir"])
        let client = ServiceClient(connection: try fixture.connect())
        let domain = "com.example.Lab"
        let watcher = try await ChangedCollector(connection: try fixture.connect(), domains: [domain])
        try await client.write(domain, "Theme", .string("dark"))
        try await client.write(domain, "Size", .integer(1))
        try await watcher.wait(for: 2)

        let temporary = directory.appendingPathComponent(".tmp")
        try PropertyListValue.dictionary(["Theme": .string("lab")]).xmlPropertyListData().write(to: temporary)
        #expect(rename(temporary.path, directory.appendingPathComponent("\(domain).plist").path) == 0)
        try await watcher.wait(for: 3)
        // The note is committed after the signal: wait for it, within a deadline.
        var entries: [HistoryEntry] = []
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            entries = try await history(client, domain)
            if entries.count == 3 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        let note = try #require(entries.last)
        #expect(note.who == "managed" && note.key == "Theme" && note.value == .string("lab") && note.previous == .string("dark"))

        // Revert to before everything: Size goes, the forced Theme stays as it is.
        try await client.perform(PreferencesCall.revertTo(domain, sequence: 0))
        #expect(try await client.readDomain(domain) == ["Theme": .string("lab")])
        #expect(try await history(client, domain).last?.who == "restore")
        #expect(try await client.readValue(domain, "Theme") == .string("lab"))
        #expect(try await client.call("IsForced", [.string(domain), .string("Theme")]) == [.boolean(true)])
    }

    @Test("the journal stays within --history-entries and --history-size, oldest dropped first; RevertTo past it is NotFound")
    func bounds() async throws {
        let fixture = try await ServiceFixture(arguments: ["--history-entries", "5", "--history-size", "100000"])
        let client = ServiceClient(connection: try fixture.connect())
        let domain = "com.example.Bound"
        for number in 1...20 { try await client.write(domain, "k", .integer(Int64(number))) }
        let entries = try await history(client, domain)
        #expect(entries.map(\.value) == (16...20).map { .integer(Int64($0)) })
        #expect(await client.refusal("RevertTo", [.string(domain), .uint64(0)]) == PreferencesErrorName.notFound.busName)
        let undo = try fixture.prefs("restore", domain, "--sequence", "1")
        #expect(undo.status == 1 && undo.stderr.contains("history-entries"), "\(undo)")
        try await client.perform(PreferencesCall.revertTo(domain, sequence: entries[1].sequence))
        #expect(try await client.readValue(domain, "k") == .integer(17))

        // Bytes: 300-byte values, at most 2,000 bytes kept (each entry counts its new and previous value).
        let small = try await ServiceFixture(arguments: ["--history-entries", "1000", "--history-size", "2000"])
        let other = ServiceClient(connection: try small.connect())
        for number in 1...20 { try await other.write(domain, "k", .string(String(repeating: "\(number % 10)", count: 300))) }
        let kept = try await history(other, domain)
        #expect(!kept.isEmpty && kept.count <= 3, "\(kept.count) entries of over 600 bytes each kept under a 2,000-byte bound")
        #expect(kept.last?.value == .string(String(repeating: "0", count: 300)))
    }

    @Test("kill -9 during a stream of writes leaves data and journal in step")
    func killDuringWrites() async throws {
        let fixture = try await ServiceFixture()
        let domain = "com.example.Stream"
        let stream = WriteStream()
        let tasks = stream.start(fixture, writers: 4, domain: domain)
        let start = ContinuousClock.now
        while stream.acknowledged.withLock({ $0.count }) < 200, ContinuousClock.now - start < .seconds(30) {
            try await Task.sleep(for: .milliseconds(10))
        }
        fixture.killService()
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        try await fixture.startService()
        let client = ServiceClient(connection: try fixture.connect())
        let stored = try await client.readDomain(domain)
        var journalled: [String: PropertyListValue] = [:]
        var after: UInt64 = 0
        while true {
            let page = try await history(client, domain, after: after)
            guard let last = page.last else { break }
            for entry in page { journalled[entry.key] = entry.value }
            after = last.sequence
        }
        #expect(stream.missing(from: stored).isEmpty, "acknowledged writes lost")
        #expect(
            journalled.count == stored.count && journalled == stored,
            "the journal's last value of each key is the stored one (\(journalled.count) journalled, \(stored.count) stored)")
        #expect(stream.acknowledged.withLock { $0.count } >= 200)
    }

    @Test("RecentHistory answers the newest entries as History's last ones; prefs history --limit and undo use it")
    func recentHistory() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        let domain = "com.example.Recent"
        for round in 0..<40 {
            try await client.perform(PreferencesCall.apply(domain, set: ["a": .integer(Int64(round)), "b": .integer(Int64(-round))], remove: []))
            try await client.write("com.example.Other", "k", .integer(Int64(round)))
        }
        let all = try await history(client, domain)
        #expect(all.count == 80)
        for limit in [1, 3, 7, 80] {
            let recent = try await client.perform(PreferencesCall.recentHistory(domain, limit: UInt32(limit)))
            #expect(recent == Array(all.suffix(limit)), "RecentHistory of \(limit)")
        }
        #expect(try await client.perform(PreferencesCall.recentHistory(domain, limit: 500)) == all, "all there is, when asked for more")
        #expect(try await client.perform(PreferencesCall.recentHistory(domain, key: "b", limit: 2)).map(\.value) == [.integer(-38), .integer(-39)])
        let everywhere = try await client.perform(PreferencesCall.recentHistory("", limit: 2))
        #expect(everywhere.map(\.domain.rawValue) == [domain, "com.example.Other"])

        // prefs history --limit prints the last lines of prefs history.
        let full = try fixture.prefs("history", domain)
        let three = try fixture.prefs("history", domain, "--limit", "3")
        #expect(three.status == 0, "\(three.stderr)")
        let lastThree: [Substring] = Array(full.stdout.split(separator: "\n").suffix(3))
        #expect(three.stdout.split(separator: "\n") == lastThree)
        #expect(try fixture.prefs("history", domain, "--limit", "1000").stdout == full.stdout)

        // Undo takes back the newest change.
        #expect(try fixture.prefs("undo", domain).status == 0)
        #expect(try fixture.prefs("read", domain, "a").stdout == "38\n")
    }
}
