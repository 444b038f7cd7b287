import Foundation
import PreferencesModel
import Testing

@testable import PreferencesRoaming

/// A roaming folder in a temporary directory, written to as a sync engine would.
struct FolderFixture: ~Copyable {
    let root: URL
    let folder: RoamingFolder
    let now: UInt64 = 1_700_000_000_000

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-roaming-reader-\(UUID().uuidString)")
        folder = RoamingFolder(directory: root.appendingPathComponent("roaming", isDirectory: true))
        try FileManager.default.createDirectory(at: folder.directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    func reader(_ limits: RoamingLimits = .default) -> RoamingReader {
        RoamingReader(folder: folder, limits: limits, checkValue: Fixture.check)
    }

    /// Puts a file in the folder under `name`.
    func put(_ name: String, _ bytes: [UInt8]) throws {
        try Data(bytes).write(to: folder.directory.appendingPathComponent(name))
    }

    /// Puts `machine`'s file in the folder, holding `values` (dated `wall`).
    func put(_ machine: MachineID, _ values: [String: PropertyListValue], wall: UInt64? = nil, name: String = "m") throws {
        var clock = HybridClock()
        let entries = values.sorted { $0.key < $1.key }.map { key, value in
            RoamingEntry(key: Fixture.key(key), value: value, stamp: RoamingStamp(time: clock.tick(physical: wall ?? now), machine: machine))
        }
        try put(RoamingFolder.fileName(for: machine), RoamingFile(machine: machine, name: name, entries: entries).encoded())
    }

    func remove(_ name: String) throws {
        try FileManager.default.removeItem(at: folder.directory.appendingPathComponent(name))
    }

    /// The copies kept in the set-aside directory: name → bytes.
    func copies() -> [String: Int] {
        let directory = folder.setAsideDirectory
        var result: [String: Int] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] {
            result[name] = (try? Data(contentsOf: directory.appendingPathComponent(name)))?.count
        }
        return result
    }
}

@Suite("Reading the roaming folder")
struct RoamingReaderTests {
    @Test("copies of files set aside stay within their bounds (count and bytes), the oldest dropped first")
    func setAsideBounded() throws {
        let folder = try FolderFixture()
        var ledger = RoamingLedger(machine: Fixture.machine(0), name: "here")
        // Bad files under ever new names, each gone when the next comes: 20 of 1 MiB with the
        // default bounds, then, with files of at most 4 KiB (copies at most 8 KiB together),
        // 12 of 1,000 bytes and 8 of 3,000.
        var small = RoamingLimits.default
        small.fileBytes = 4096
        let rounds = [
            (RoamingLimits.default, Array(repeating: 1 << 20, count: 20)), (small, Array(repeating: 1000, count: 12) + Array(repeating: 3000, count: 8)),
        ]
        var reader = folder.reader()
        for (round, (limits, sizes)) in rounds.enumerated() {
            reader = folder.reader(limits)
            var previous: String?
            for (index, size) in sizes.enumerated() {
                if let previous { try folder.remove(previous) }
                let name = RoamingFolder.fileName(for: Fixture.machine(100 * (round + 1) + index))
                try folder.put(name, Array(repeating: UInt8(index), count: size))
                _ = reader.scan(into: &ledger, now: folder.now)
                let copies = folder.copies()
                #expect(copies.count <= limits.setAsideCopies, "after \(index + 1) files: \(copies.count) copies")
                #expect(copies.values.reduce(0, +) <= limits.setAsideBytes, "after \(index + 1) files: \(copies.values.reduce(0, +)) bytes")
                #expect(copies[name] == size, "the latest file's copy is kept")
                #expect(reader.setAside[RoamingFolder.FileName(name)]?.copy != nil)
                previous = name
            }
            if let previous { try folder.remove(previous) }
            if round == 0 { #expect(folder.copies().count == 8 && folder.copies().values.reduce(0, +) == 8 << 20) }
        }
        #expect(folder.copies().count == 2)
        let limits = small
        // Many bad files at once: the newest copies are kept; those whose copy was dropped
        // are still shown set aside, without a copy.
        let many = (300..<320).map { RoamingFolder.fileName(for: Fixture.machine($0)) }
        for name in many { try folder.put(name, Array(repeating: 1, count: 100)) }
        _ = reader.scan(into: &ledger, now: folder.now)
        #expect(folder.copies().count == limits.setAsideCopies)
        #expect(many.allSatisfy { reader.setAside[RoamingFolder.FileName($0)] != nil })
        let withCopies = reader.setAside.values.compactMap(\.copy)
        #expect(withCopies.count == limits.setAsideCopies)
        #expect(withCopies.allSatisfy { FileManager.default.fileExists(atPath: $0) })
    }

    /// A machine identity spelled `0…0n`: such names sort before any derived identity's.
    static func squatter(_ n: Int) -> MachineID {
        let digits = String(n, radix: 16)
        return MachineID(String(repeating: "0", count: 32 - digits.count) + digits)!
    }

    @Test("64 empty or bad files named to sort first take no place: the real machine's file is read, and stays read")
    func squattersTakeNoPlace() throws {
        let folder = try FolderFixture()
        var reader = folder.reader()
        var ledger = RoamingLedger(machine: Fixture.machine(0), name: "here")
        let real = Fixture.machine(1)
        try folder.put(real, ["FontSize": .integer(14)], name: "desktop")
        for n in 1...64 {
            // Empty files, damaged ones, and valid ones holding no change.
            let bytes: [UInt8] =
                switch n % 3 {
                case 0: []
                case 1: Array("PRFSROAM garbage".utf8)
                default: RoamingFile(machine: Self.squatter(n), name: "squat", entries: []).encoded()
                }
            try folder.put(RoamingFolder.fileName(for: Self.squatter(n)), bytes)
        }
        _ = reader.scan(into: &ledger, now: folder.now)
        #expect(ledger.remoteWinner(Fixture.key("FontSize"))?.value == .integer(14))
        #expect(reader.setAside[RoamingFolder.FileName(RoamingFolder.fileName(for: real))] == nil)
        // The squatters leave; the real machine's next change is read too.
        for n in 1...64 { try folder.remove(RoamingFolder.fileName(for: Self.squatter(n))) }
        try folder.put(real, ["FontSize": .integer(15)], wall: folder.now + 1, name: "desktop")
        _ = reader.scan(into: &ledger, now: folder.now)
        #expect(ledger.remoteWinner(Fixture.key("FontSize"))?.value == .integer(15))
    }

    @Test("a machine already known keeps its place against 64 valid newcomers named to sort first, after a restart too")
    func knownMachinesFirst() throws {
        let folder = try FolderFixture()
        var reader = folder.reader()
        var ledger = RoamingLedger(machine: Fixture.machine(0), name: "here")
        let real = Fixture.machine(1)
        try folder.put(real, ["FontSize": .integer(14)], name: "desktop")
        _ = reader.scan(into: &ledger, now: folder.now)
        for n in 1...64 { try folder.put(Self.squatter(n), ["Squat\(n)": .integer(1)], name: "squat") }
        try folder.put(real, ["FontSize": .integer(15)], wall: folder.now + 1, name: "desktop")
        _ = reader.scan(into: &ledger, now: folder.now)
        #expect(ledger.remoteWinner(Fixture.key("FontSize"))?.value == .integer(15))
        #expect(ledger.remote.count == 64)
        // After a restart: the machine whose change was adopted is known, and read first.
        var adopted = RoamingLedger(machine: Fixture.machine(0), name: "here")
        adopted.adopt([
            RoamingEntry(key: Fixture.key("FontSize"), value: .integer(15), stamp: RoamingStamp(time: HybridTime(wall: folder.now + 1), machine: real))
        ])
        var restarted = RoamingLedger(machine: Fixture.machine(0), name: "here", adopted: adopted.adoptedFile)
        var fresh = folder.reader()
        _ = fresh.scan(into: &restarted, now: folder.now)
        #expect(restarted.remote[real] != nil)
        #expect(fresh.setAside[RoamingFolder.FileName(RoamingFolder.fileName(for: real))] == nil)
    }

    @Test("a valid file left out for want of a place is read once a place frees, without changing")
    func placeFreed() throws {
        let folder = try FolderFixture()
        var reader = folder.reader()
        var ledger = RoamingLedger(machine: Fixture.machine(0), name: "here")
        for n in 1...64 { try folder.put(Self.squatter(n), ["Squat\(n)": .integer(1)], name: "squat") }
        let real = Fixture.machine(1)
        try folder.put(real, ["FontSize": .integer(14)], name: "desktop")
        _ = reader.scan(into: &ledger, now: folder.now)
        let realName = RoamingFolder.FileName(RoamingFolder.fileName(for: real))
        #expect(ledger.remote[real] == nil)
        #expect(reader.setAside[realName]?.copy == nil, "a valid file left out is not copied")
        try folder.remove(RoamingFolder.fileName(for: Self.squatter(1)))
        _ = reader.scan(into: &ledger, now: folder.now)
        #expect(ledger.remoteWinner(Fixture.key("FontSize"))?.value == .integer(14))
        #expect(reader.setAside[realName] == nil)
        #expect(ledger.remote.count == 64)
    }

    static let year9999: UInt64 = 253_402_300_799_000

    @Test("this machine's own file dated year 9999 is refused at start, as another machine's would be: the clock stays, another machine's later change wins")
    func ownFileFromTheFuture() throws {
        let folder = try FolderFixture()
        let me = Fixture.machine(0), other = Fixture.machine(1)
        let key = Fixture.key("FontSize")
        // Replaced while prefsd was down.
        try folder.put(me, ["FontSize": .integer(99)], wall: Self.year9999, name: "here")
        var reader = folder.reader()
        let loaded = reader.load(machine: me, name: "here", now: folder.now)
        var ledger = loaded.ledger
        #expect(loaded.rewriteOwn)
        #expect(ledger.log.isEmpty)
        #expect(ledger.clock.latest.wall < Self.year9999)
        let refusal = reader.refused[RoamingFolder.FileName(RoamingFolder.fileName(for: me))]
        #expect(refusal?.reason.contains("ahead of this machine's clock") == true, "\(String(describing: refusal))")
        #expect(refusal?.copy.map { FileManager.default.fileExists(atPath: $0) } == true)
        #expect(loaded.events.count == 1)
        // Another machine's change made now is applied over this machine's value…
        try folder.put(other, ["FontSize": .integer(12)], wall: folder.now + 10, name: "desktop")
        _ = reader.scan(into: &ledger, now: folder.now + 20)
        let plan = ledger.plan(local: [key: .integer(14)], selection: Fixture.selection) { _ in false }
        #expect(plan.apply.map(\.value) == [.integer(12)])
        #expect(plan.publish.isEmpty)
        // …and this machine's next change is dated now, not in year 9999.
        let published = ledger.publish([key: .integer(13)], physical: folder.now + 30)
        #expect(published.map(\.stamp.time.wall) == [folder.now + 30])
    }

    @Test("this machine's file claiming another writer, and an adopted state dated year 9999, are refused at start; a good file loads")
    func ownFilesChecked() throws {
        let folder = try FolderFixture()
        let me = Fixture.machine(0), other = Fixture.machine(1)
        let stamp = RoamingStamp(time: HybridTime(wall: folder.now), machine: other)
        let entry = RoamingEntry(key: Fixture.key("FontSize"), value: .integer(1), stamp: stamp)
        try folder.put(RoamingFolder.fileName(for: me), RoamingFile(machine: other, name: "there", entries: [entry]).encoded())
        var later = entry
        later.stamp.time.wall = Self.year9999
        try folder.folder.writeLocal(
            RoamingFile(kind: .adopted, machine: me, name: "here", entries: [later]).encoded(), name: folder.folder.adoptedURL.lastPathComponent)
        var reader = folder.reader()
        let loaded = reader.load(machine: me, name: "here", now: folder.now)
        #expect(loaded.rewriteOwn)
        #expect(loaded.ledger.adopted.isEmpty && loaded.ledger.log.isEmpty)
        #expect(loaded.ledger.clock.latest.wall < Self.year9999)
        #expect(reader.refused.count == 2, "\(reader.refused)")
        #expect(reader.refused.values.allSatisfy { $0.copy != nil })
        // This machine's good file, dated within the allowed skew, loads as it is.
        try folder.put(me, ["FontSize": .integer(2)], wall: folder.now + 86_400_000, name: "here")
        try FileManager.default.removeItem(at: folder.folder.adoptedURL)
        var again = folder.reader()
        let good = again.load(machine: me, name: "here", now: folder.now)
        #expect(!good.rewriteOwn && again.refused.isEmpty)
        #expect(good.ledger.log.map(\.value) == [.integer(2)])
    }
}
