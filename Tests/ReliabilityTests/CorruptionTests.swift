import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PrefsdTestSupport
import Testing

extension Reliability {
    /// A store damaged on disk is moved aside, kept and logged; prefsd starts.
    @Suite("Corruption")
    struct Corruption {
        enum Damage: String, CaseIterable, Sendable {
            /// The whole file replaced by random bytes.
            case garbage
            /// A valid store cut to half its length.
            case truncatedToHalf
            /// A valid store cut inside its first page.
            case truncatedInHeader
            /// One page in the middle of a valid store overwritten: it still opens, but fails
            /// `PRAGMA quick_check`.
            case overwrittenPage
        }

        @Test("a damaged store is moved aside with a timestamped name, logged, and prefsd starts", arguments: Damage.allCases)
        func damagedStore(_ damage: Damage) async throws {
            let fixture = try await ServiceFixture()
            let client = ServiceClient(connection: try fixture.connect())
            // Enough 1 KiB values for a store of a few hundred pages.
            for index in 0..<300 {
                try await client.write("com.example.Corrupt", "k\(index)", .data(Data(repeating: UInt8(index % 251), count: 1024)))
            }
            client.connection.close()
            #expect(fixture.stopService() == 0)

            let database = fixture.storeDirectory.appendingPathComponent("store.sqlite")
            var bytes = try Data(contentsOf: database)
            #expect(bytes.count > 64 * 4096, "the store is too small to damage in the middle: \(bytes.count) bytes")
            var generator = SystemRandomNumberGenerator()
            switch damage {
            case .garbage:
                bytes = Data((0..<bytes.count).map { _ in UInt8.random(in: 0...255, using: &generator) })
            case .truncatedToHalf:
                bytes = bytes.prefix(bytes.count / 2)
            case .truncatedInHeader:
                bytes = bytes.prefix(1000)
            case .overwrittenPage:
                let pageSize = 4096
                let page = bytes.count / pageSize / 2
                let garbage = (0..<pageSize).map { _ in UInt8.random(in: 0...255, using: &generator) }
                bytes.replaceSubrange(page * pageSize..<(page + 1) * pageSize, with: garbage)
            }
            try bytes.write(to: database)

            try await fixture.startService()
            let after = ServiceClient(connection: try fixture.connect())
            defer { after.connection.close() }
            // It serves, with a fresh, empty store that takes writes.
            #expect(try await after.domains() == [])
            try await after.write("com.example.Corrupt", "fresh", .integer(1))
            #expect(try await after.readValue("com.example.Corrupt", "fresh") == .integer(1))

            let copies = fixture.damagedCopies
            #expect(copies.count == 1, "expected one damaged copy, found \(fixture.storeEntries)")
            guard let copy = copies.first else { return }
            #expect(copy.wholeMatch(of: /store\.sqlite\.corrupt-\d{8}T\d{6}Z(-\d+)?/) != nil, "\(copy) has no timestamp")
            let moved = fixture.storeDirectory.appendingPathComponent(copy)
            #expect(try Data(contentsOf: moved) == bytes, "the damaged copy is not the original bytes")
            #expect(fixture.log.contains(moved.path), "the log does not name \(moved.path):\n\(fixture.log)")

            // A restart keeps the copy and does not move the fresh store aside.
            #expect(fixture.stopService() == 0)
            try await fixture.startService()
            #expect(fixture.damagedCopies == copies)
            #expect(FileManager.default.fileExists(atPath: moved.path))
            let again = ServiceClient(connection: try fixture.connect())
            defer { again.connection.close() }
            #expect(try await again.readValue("com.example.Corrupt", "fresh") == .integer(1))
            print("reliability.corruption damage=\(damage.rawValue) moved_to=\(copy) original_bytes_kept=true")
        }
    }
}
