import Foundation
import PreferencesModel
import PrefsCommand
import Testing

@Suite("prefs: value parsing, argument rewriting and output formats")
struct ParsingTests {
    @Test("type flags give values of their type")
    func typeFlags() throws {
        #expect(try ValueParser.parseWrite(["K", "-string", "14"]) == .set(key: "K", value: .string("14")))
        #expect(try ValueParser.parseWrite(["K", "-int", "-14"]) == .set(key: "K", value: .integer(-14)))
        #expect(try ValueParser.parseWrite(["K", "-integer", "+7"]) == .set(key: "K", value: .integer(7)))
        #expect(try ValueParser.parseWrite(["K", "-float", "1.5"]) == .set(key: "K", value: .real(1.5)))
        #expect(try ValueParser.parseWrite(["K", "-bool", "YES"]) == .set(key: "K", value: .boolean(true)))
        #expect(try ValueParser.parseWrite(["K", "-boolean", "false"]) == .set(key: "K", value: .boolean(false)))
        #expect(try ValueParser.parseWrite(["K", "-date", "2024-05-01 12:00:00 +0000"]) == .set(key: "K", value: .date(secondsSince1970: 1_714_564_800)))
        #expect(try ValueParser.parseWrite(["K", "-date", "2024-05-01T12:00:00Z"]) == .set(key: "K", value: .date(secondsSince1970: 1_714_564_800)))
        #expect(try ValueParser.parseWrite(["K", "-date", "2024-05-01"]) == .set(key: "K", value: .date(secondsSince1970: 1_714_521_600)))
        #expect(try ValueParser.parseWrite(["K", "-data", "<0a ff>"]) == .set(key: "K", value: .data(Data([0x0a, 0xff]))))
    }

    @Test("plain values are old-style text, or strings when they do not parse")
    func plainValues() throws {
        #expect(try ValueParser.parseWrite(["K", "(a, b)"]) == .set(key: "K", value: .array([.string("a"), .string("b")])))
        #expect(try ValueParser.parseWrite(["K", "hello world"]) == .set(key: "K", value: .string("hello world")))
        #expect(try ValueParser.parseWrite(["K", "-5"]) == .set(key: "K", value: .string("-5")))
        #expect(try ValueParser.parseWrite(["{ A = 1; B = <*I2>; }"]) == .replaceDomain(["A": .string("1"), "B": .integer(2)]))
    }

    @Test("arrays and dictionaries take typed items; -add forms are recognised")
    func collections() throws {
        #expect(
            try ValueParser.parseWrite(["K", "-array", "a", "-int", "2", "-bool", "no"])
                == .set(key: "K", value: .array([.string("a"), .integer(2), .boolean(false)])))
        #expect(try ValueParser.parseWrite(["K", "-array"]) == .set(key: "K", value: .array([])))
        #expect(try ValueParser.parseWrite(["K", "-array-add", "c"]) == .arrayAdd(key: "K", items: [.string("c")]))
        #expect(
            try ValueParser.parseWrite(["K", "-dict", "a", "-float", "2", "b", "x"])
                == .set(key: "K", value: .dictionary(["a": .real(2), "b": .string("x")])))
        #expect(try ValueParser.parseWrite(["K", "-dict-add", "a", "b"]) == .dictAdd(key: "K", entries: ["a": .string("b")]))
    }

    @Test(
        "bad values are usage errors that say what is expected",
        arguments: [
            ["K", "-int", "abc"], ["K", "-int", "99999999999999999999"], ["K", "-float", "x"], ["K", "-float", "inf"],
            ["K", "-bool", "maybe"], ["K", "-date", "yesterday"], ["K", "-data", "abc"], ["K", "-data", "zz"],
            ["K", "-string"], ["K", "-dict", "a"], ["K", "-array-add"], ["K", "-array", "-dict"], ["K", "a", "b"],
            [], ["not a dictionary"],
        ])
    func badValues(arguments: [String]) {
        #expect {
            try ValueParser.parseWrite(arguments)
        } throws: { error in
            guard let error = error as? PrefsError, case .usage = error else { return false }
            return error.exitCode == .usage && !error.description.contains("\n")
        }
    }

    @Test("-g and -globalDomain become NSGlobalDomain in the domain position only")
    func globalDomain() {
        #expect(ArgumentNormalizer.normalize(["read", "-g"]) == ["read", "NSGlobalDomain"])
        #expect(ArgumentNormalizer.normalize(["read", "--json", "-globalDomain", "K"]) == ["read", "--json", "NSGlobalDomain", "K"])
        #expect(ArgumentNormalizer.normalize(["write", "-g", "K", "-string", "-g"]) == ["write", "NSGlobalDomain", "K", "-string", "-g"])
        #expect(ArgumentNormalizer.normalize(["write", "com.x", "K", "-g"]) == ["write", "com.x", "K", "-g"])
        #expect(ArgumentNormalizer.normalize(["monitor", "com.x", "-g"]) == ["monitor", "com.x", "NSGlobalDomain"])
        #expect(ArgumentNormalizer.normalize(["volatile", "read", "-g"]) == ["volatile", "read", "NSGlobalDomain"])
        #expect(ArgumentNormalizer.normalize(["read", "--", "-g"]) == ["read", "--", "-g"])
        #expect(ArgumentNormalizer.normalize(["-g"]) == ["-g"])
    }

    @Test("text output is what defaults prints")
    func textOutput() {
        #expect(OutputFormatter.text(.string("dark mode")) == "dark mode")
        #expect(OutputFormatter.text(.integer(14)) == "14")
        #expect(OutputFormatter.text(.boolean(true)) == "1")
        #expect(OutputFormatter.text(.date(secondsSince1970: 1_714_564_800)) == "2024-05-01 12:00:00 +0000")
        #expect(
            OutputFormatter.text(.dictionary(["When": .date(secondsSince1970: 0), "A": .array([.string("x y")])]))
                == "{\n    A = (\n        \"x y\"\n    );\n    When = \"1970-01-01 00:00:00 +0000\";\n}")
    }

    @Test("JSON output maps dates to ISO 8601 and data to base64, and escapes strings")
    func jsonOutput() throws {
        let value = PropertyListValue.dictionary([
            "d": .date(secondsSince1970: 1_714_564_800), "b": .data(Data([0, 1, 2])), "r": .real(2),
            "s": .string("a\"b\n\u{1}"), "t": .boolean(true), "i": .integer(-3), "a": .array([]),
        ])
        let text = OutputFormatter.json(value)
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(parsed["d"] as? String == "2024-05-01T12:00:00Z")
        #expect(parsed["b"] as? String == "AAEC")
        #expect(parsed["s"] as? String == "a\"b\n\u{1}")
        #expect(parsed["i"] as? Int == -3)
        #expect(text.contains("\"r\": 2.0"))
        #expect(text.contains("\"t\": true"))
        #expect(ValueText.iso8601(0.5) == "1970-01-01T00:00:00.500Z")
    }

    @Test("monitor lines stay on one line")
    func monitorLines() {
        let line = OutputFormatter.changeLine(
            domain: "com.x", changed: ["B": .array([.string("a"), .dictionary(["k": .string("v\nw")])]), "A": .integer(1)], removed: ["Z", "Y"])
        #expect(line == "com.x: A = 1; B = (\"a\", { k = \"v\\nw\"; }); removed Y, Z")
        #expect(
            OutputFormatter.changeJSON(domain: "com.x", changed: ["A": .integer(1)], removed: ["Z"])
                == "{\"domain\":\"com.x\",\"changed\":{\"A\":1},\"removed\":[\"Z\"]}")
    }

    @Test("find matches domain names, keys and nested string values, ignoring case")
    func findMatches() {
        let entries: [String: PropertyListValue] = ["FontName": .string("Menlo"), "Recent": .array([.string("notes.TXT")]), "Size": .integer(12)]
        #expect(Prefs.Find.matches("menlo", domain: "com.x", entries: entries) == ["FontName": .string("Menlo")])
        #expect(Prefs.Find.matches("txt", domain: "com.x", entries: entries).keys.sorted() == ["Recent"])
        #expect(Prefs.Find.matches("size", domain: "com.x", entries: entries).keys.sorted() == ["Size"])
        #expect(Prefs.Find.matches("COM", domain: "com.x", entries: entries).count == 3)
        #expect(Prefs.Find.matches("nothing", domain: "com.x", entries: entries).isEmpty)
    }

    @Test("docs/prefs.md's exit-status table of prefs lists exactly the statuses the code uses, with their meaning; --help has them too")
    func exitCodesDocumented() throws {
        // docs/prefs.md under the package root, two directories above this file.
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/prefs.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        let section = try #require(text.range(of: "**Exit status**"), "docs/prefs.md has no **Exit status** table for prefs")
        // The table's rows: `| status | meaning |` lines after the heading, until the first other line.
        var documented: [Int32: String] = [:]
        var inTable = false
        for line in text[section.upperBound...].split(separator: "\n", omittingEmptySubsequences: false).dropFirst() {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard line.hasPrefix("|"), cells.count >= 3 else {
                if inTable { break } else { continue }
            }
            inTable = true
            if let status = Int32(cells[1]) { documented[status] = cells[2] }
        }
        let codes = Dictionary(uniqueKeysWithValues: PrefsExitCode.allCases.map { ($0.rawValue, $0.summary) })
        #expect(Set(documented.keys) == Set(codes.keys), "docs/prefs.md statuses \(documented.keys.sorted()) differ from the code's \(codes.keys.sorted())")
        for (status, summary) in codes {
            #expect(
                documented[status]?.hasPrefix(summary) == true,
                "status \(status): docs/prefs.md says \"\(documented[status] ?? "nothing")\", the code \"\(summary)\"")
        }
        // --help wraps long lines: the start of each summary is on the status's line.
        let help = Prefs.helpMessage()
        for code in PrefsExitCode.allCases {
            #expect(help.contains(code.summary.prefix(30)), "status \(code.rawValue) is missing from --help")
        }
    }
}
