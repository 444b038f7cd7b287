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
            type: { _, key in key == "port" ? "q" : nil }, calls: [1: call])
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
        let blame = DconfBlame(entries: [unmapped] + many, type: { _, _ in nil }, calls: [:])
        #expect(blame.records.count == DconfBlame.maximumRecords)
        #expect(blame.records.first?.sequence == 38)
        #expect(blame.records.last?.sequence == 101)
        #expect(!blame.text.contains("hidden"))
    }
}
