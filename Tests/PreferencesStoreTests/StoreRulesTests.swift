import Foundation
import GRDB
import PreferencesModel
import PreferencesStore
import Synchronization
import Testing

/// The store applies its rules to every batch, whatever the caller: a key or value that
/// breaks them refuses the batch whole, and a store that holds such rows (written before
/// the rules) loads without them.
@Suite("The store's rules")
struct StoreRulesTests {
    /// Commits `mutations` and waits for the answer.
    static func commit(_ store: DomainStore, _ mutations: [StoreMutation]) -> Result<Void, StoreError> {
        let outcome = Mutex<Result<Void, StoreError>?>(nil)
        let answered = DispatchSemaphore(value: 0)
        store.commit(mutations) { result in
            outcome.withLock { $0 = result }
            answered.signal()
        }
        answered.wait()
        return outcome.withLock { $0 } ?? .failure(.closed)
    }

    static var deep: PropertyListValue {
        (0..<31).reduce(PropertyListValue.integer(1)) { inner, _ in .array([inner]) }
    }

    @Test(
        "a NUL in a string, key or dictionary key, a non-finite date, a decomposed key or nesting past the bus refuses the batch whole",
        arguments: [
            ("Key", PropertyListValue.string("Evil\u{0}Theme"), "a string holds a NUL character"),
            ("Key", .array([.dictionary(["a\u{0}b": .integer(1)])]), "a dictionary key holds a NUL character"),
            ("Key", .date(secondsSince1970: .infinity), "a date must be a finite number"),
            ("Key", .date(secondsSince1970: .nan), "a date must be a finite number"),
            ("Key", StoreRulesTests.deep, "nests too deeply"),
            ("Bad\u{0}Key", .integer(1), "it contains a NUL byte"),
            ("cafe\u{301}", .integer(1), "not in Unicode normalization form C"),
        ])
    func refused(key: String, value: PropertyListValue, reason: String) throws {
        let temporary = try TemporaryDirectory()
        let store = try DomainStore(directory: temporary.store, logger: LogRecorder().logger)
        defer { store.close() }
        let editor = domain("com.example.Editor")
        let result = Self.commit(store, [.set(editor, key: "Beside", value: .integer(1)), .set(editor, key: key, value: value)])
        guard case .failure(.refused(let problem)) = result else {
            Issue.record("committed: \(result)")
            return
        }
        #expect(problem.contains(reason), "\(problem)")
        #expect(try store.loadAll().isEmpty, "part of a refused batch was stored")
        #expect(try store.history(domain: nil, key: nil, after: 0, limit: 100, maxBytes: 1 << 20).isEmpty)
        // A note (an administrator's change, journalled only) obeys the same rules.
        let note = Self.commit(store, [.note(editor, key: "Managed", value: value, previous: nil)])
        if key == "Key" {
            guard case .failure(.refused) = note else {
                Issue.record("a note of \(value) was journalled: \(note)")
                return
            }
        }
    }

    @Test("rows an older prefsd stored against the rules are left out at load and named, and can be removed")
    func olderRowsLeftOut() throws {
        let temporary = try TemporaryDirectory()
        let editor = domain("com.example.Editor")
        do {
            let store = try DomainStore(directory: temporary.store, logger: LogRecorder().logger)
            #expect(throws: Never.self) { try Self.commit(store, [.set(editor, key: "Good", value: .integer(1))]).get() }
            store.close()
        }
        let nul = Data(PropertyListValue.string("Evil\u{0}Theme").encoded())
        try writeStoreDatabase(in: temporary.store) { db in
            try db.execute(sql: "INSERT INTO preference(domain, key, value) VALUES (?, ?, ?)", arguments: [editor.rawValue, "Theme", nul])
            try db.execute(
                sql: "INSERT INTO preference(domain, key, value) VALUES (?, ?, ?)",
                arguments: [editor.rawValue, "cafe\u{301}", Data(PropertyListValue.integer(2).encoded())])
        }
        let log = LogRecorder()
        let store = try DomainStore(directory: temporary.store, logger: log.logger)
        defer { store.close() }
        #expect(try store.loadAll() == [editor: ["Good": .integer(1)]])
        let leftOut = store.leftOutKeys[editor] ?? []
        // Byte for byte: as Strings, the decomposed key would equal its composed form.
        #expect(Set(leftOut.map { Array($0.utf8) }) == [Array("Theme".utf8), Array("cafe\u{301}".utf8)])
        #expect(log.messages.contains { $0.contains("left out") && $0.contains("a string holds a NUL character") }, "\(log.messages)")
        // Removals always pass: the rows go.
        #expect(throws: Never.self) { try Self.commit(store, leftOut.map { .remove(editor, key: $0) }).get() }
        #expect(try store.loadAll() == [editor: ["Good": .integer(1)]])
        #expect(store.leftOutKeys.isEmpty)
    }
}
