import Foundation
import GRDB
import PreferencesModel
import PreferencesStore
import Testing

/// One domain read alone, as the service reads a domain before the whole store is loaded.
@Suite("Loading one domain")
struct LoadDomainTests {
    @Test("a domain read alone holds what the whole load holds for it, and leaves out the same keys")
    func sameAsWholeLoad() throws {
        let temporary = try TemporaryDirectory()
        let editor = domain("com.example.Editor")
        let other = domain("org.example.Other")
        let damaged = domain("com.example.Damaged")
        do {
            let store = try DomainStore(directory: temporary.store, logger: LogRecorder().logger)
            let mutations: [StoreMutation] = [
                .set(editor, key: "Good", value: .integer(1)), .set(editor, key: "List", value: .array([.string("a"), .real(2.5)])),
                .set(other, key: "k", value: .boolean(true)),
            ]
            #expect(throws: Never.self) { try store.commitAndWait(mutations).get() }
            store.close()
        }
        let nul = Data(PropertyListValue.string("Evil\u{0}Theme").encoded())
        try writeStoreDatabase(in: temporary.store) { db in
            try db.execute(sql: "INSERT INTO preference(domain, key, value) VALUES (?, ?, ?)", arguments: [editor.rawValue, "Theme", nul])
            try db.execute(sql: "INSERT INTO preference(domain, key, value) VALUES (?, ?, ?)", arguments: [editor.rawValue, "Broken", Data([1, 0x7f])])
            try db.execute(sql: "INSERT INTO preference(domain, key, value) VALUES (?, ?, ?)", arguments: [damaged.rawValue, "Only", nul])
        }
        let log = LogRecorder()
        let store = try DomainStore(directory: temporary.store, logger: log.logger)
        defer { store.close() }
        let alone = try [editor, other, damaged, domain("com.example.Absent")].map { try store.loadDomain($0) }
        #expect(log.messages.isEmpty, "a domain read alone logs nothing: \(log.messages)")
        let whole = try store.loadAll()
        #expect(alone[0].entries == whole[editor])
        #expect(alone[0].leftOut == store.leftOutKeys[editor])
        #expect(alone[0].leftOut.sorted() == ["Broken", "Theme"])
        #expect(alone[1].entries == whole[other] && alone[1].leftOut.isEmpty)
        #expect(alone[2].entries.isEmpty && whole[damaged] == nil)
        #expect(alone[2].leftOut == ["Only"] && store.leftOutKeys[damaged] == ["Only"])
        #expect(alone[3].entries.isEmpty && alone[3].leftOut.isEmpty)
    }
}
