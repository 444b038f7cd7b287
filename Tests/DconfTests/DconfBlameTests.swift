import Dconf
import PreferencesModel
import Testing

/// `Blame`'s records, made from history entries as prefsd reads them (oldest first, one
/// entry per key, the keys of one change sharing its sequence number).
@Suite("dconf's Blame, from the history")
struct DconfBlameTests {
    private func entry(_ sequence: UInt64, _ key: String, _ value: PropertyListValue?, who: String = "prefs", secure: Bool = false) throws -> HistoryEntry {
        HistoryEntry(
            sequence: sequence, time: 1_795_881_600_000_000 + Int64(sequence) * 1_500, domain: try DomainName("org.example.app"), key: key, who: who,
            value: value, previous: nil, secure: secure)
    }

    @Test("a change's keys make one record; a reset, a secure key and a typed value are told as dconf's clients see them")
    func records() throws {
        let call = DconfBlame.Call(sender: ":1.9", processID: 321, objectPath: "/ca/desrt/dconf/Writer/user", method: "Change")
        let blame = DconfBlame(
            entries: [
                try entry(1, "size", .integer(42), who: "dconf"), try entry(1, "title", nil, who: "dconf"),
                try entry(2, "token", nil, secure: true), try entry(2, "port", .integer(8080)),
            ],
            oldestCut: false, type: { _, key in key == "port" ? "q" : nil }, calls: [1: call])
        #expect(blame.records.map(\.sequence) == [1, 2])
        #expect(
            blame.text == """
                Sender: :1.9
                Object path: /ca/desrt/dconf/Writer/user
                Method: Change
                PID: 321
                Program: dconf
                Time: 2026-11-28T16:00:00.001Z
                History: change 1
                Parameters:
                  /org/example/app/size = int64 42
                  /org/example/app/title reset

                ====================================================================
                Program: prefs
                Time: 2026-11-28T16:00:00.003Z
                History: change 2
                Parameters:
                  /org/example/app/token changed (its value is not recorded)
                  /org/example/app/port = uint16 8080

                """)
    }

    @Test("keys no dconf client sees are left out, and changes left with none; only the newest 64 changes are told")
    func bounds() throws {
        let unmapped = HistoryEntry(
            sequence: 1, time: 0, domain: try DomainName("org.example"), key: "hidden/key", who: "prefs", value: .integer(1), previous: nil)
        let many = try (2...101).map { try entry(UInt64($0), "k", .integer(Int64($0))) }
        let blame = DconfBlame(entries: [unmapped] + many, oldestCut: false, type: { _, _ in nil }, calls: [:])
        #expect(blame.records.count == DconfBlame.maximumRecords)
        #expect(blame.records.first?.sequence == 38)
        #expect(blame.records.last?.sequence == 101)
        #expect(!blame.text.contains("hidden"))
    }

    @Test("a change the history read ends inside says that more of its keys are not told; one read whole, or dropped for being old, says nothing")
    func cutChange() throws {
        let big = try (0..<5).map { try entry(7, "key\($0)", .integer(Int64($0))) }
        let cut = DconfBlame(entries: big + [try entry(8, "size", .integer(1))], oldestCut: true, type: { _, _ in nil }, calls: [:])
        #expect(cut.records.map(\.cut) == [true, false])
        let records = cut.text.components(separatedBy: "\n====================================================================\n")
        #expect(records.count == 2)
        #expect(
            records[0].hasSuffix(
                "  /org/example/app/key4 = int64 4\n  … more keys of this change are not told: Blame reads only the newest entries of the history\n"),
            "\(records[0])")
        #expect(!records[1].contains("not told"))
        #expect(!DconfBlame(entries: big, oldestCut: false, type: { _, _ in nil }, calls: [:]).text.contains("not told"))
        // The cut change is older than the 64 told: nothing of it is told.
        let many = try (10...73).map { try entry(UInt64($0), "k", .integer(Int64($0))) }
        let told = DconfBlame(entries: big + many, oldestCut: true, type: { _, _ in nil }, calls: [:])
        #expect(told.records.count == DconfBlame.maximumRecords && !told.text.contains("not told"))
    }
}
