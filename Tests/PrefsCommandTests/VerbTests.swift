import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PrefsdTestSupport
import Testing

/// Expects `result` to have succeeded, showing its standard error when it did not.
func expectSuccess(_ result: (status: Int32, stdout: String, stderr: String), sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(result.status == 0, "prefs failed: \(result.stderr)", sourceLocation: sourceLocation)
}

@Suite("prefs verbs against a private bus")
struct VerbTests {
    /// Every type, the flags that write it, what `read` prints and what `read-type` says.
    static let typeCases: [(flags: [String], value: PropertyListValue, text: String, type: String)] = [
        (["-string", "dark mode"], .string("dark mode"), "dark mode", "string"),
        (["-int", "-42"], .integer(-42), "-42", "integer"),
        (["-integer", "9223372036854775807"], .integer(.max), "9223372036854775807", "integer"),
        (["-float", "1.5"], .real(1.5), "1.5", "float"),
        (["-float", "2"], .real(2), "2", "float"),
        (["-bool", "yes"], .boolean(true), "1", "boolean"),
        (["-boolean", "FALSE"], .boolean(false), "0", "boolean"),
        (["-date", "2024-05-01 12:00:00 +0000"], .date(secondsSince1970: 1_714_564_800), "2024-05-01 12:00:00 +0000", "date"),
        (["-data", "00ff10"], .data(Data([0, 0xff, 0x10])), "{length = 3, bytes = 0x00ff10}", "data"),
        (["-array", "a", "-int", "2"], .array([.string("a"), .integer(2)]), "(\n    a,\n    2\n)", "array"),
        (["-dict", "k", "-bool", "no"], .dictionary(["k": .boolean(false)]), "{\n    k = 0;\n}", "dictionary"),
        (
            ["(x, <*I3>, { n = <*R0.5>; })"], .array([.string("x"), .integer(3), .dictionary(["n": .real(0.5)])]),
            "(\n    x,\n    3,\n    {\n        n = 0.5;\n    }\n)", "array"
        ),
    ]

    @Test("write then read round-trips every type: the service holds the type, read and read-type print it")
    func roundTripEveryType() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        for (index, item) in Self.typeCases.enumerated() {
            let key = "Key\(index)"
            expectSuccess(try fixture.run(ServiceFixture.prefsBinary.path, ["write", "com.example.Types", key] + item.flags))
            #expect(try await client.readValue("com.example.Types", key) == item.value, "\(item.flags)")
            #expect(try fixture.prefs("read-type", "com.example.Types", key).stdout == "Type is \(item.type)\n")
            #expect(try fixture.prefs("read", "com.example.Types", key).stdout == item.text + "\n", "\(item.flags)")
        }
        // JSON: dates as ISO 8601, data as base64.
        let json = try fixture.prefs("read", "--json", "com.example.Types")
        expectSuccess(json)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["Key7"] as? String == "2024-05-01T12:00:00Z")
        #expect(object["Key8"] as? String == "AP8Q")
        #expect(object["Key1"] as? Int == -42)
        #expect(try fixture.prefs("read", "--json", "com.example.Types", "Key5").stdout == "true\n")
    }

    @Test("write a whole domain, -array-add, -dict-add, and plain property-list text")
    func writeForms() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        expectSuccess(try fixture.prefs("write", "com.example.Editor", "Old", "x"))
        expectSuccess(try fixture.prefs("write", "com.example.Editor", "{ FontSize = <*I12>; Recent = (a.txt); Colors = { Fore = white; }; }"))
        #expect(
            try await client.readDomain("com.example.Editor") == [
                "FontSize": .integer(12), "Recent": .array([.string("a.txt")]), "Colors": .dictionary(["Fore": .string("white")]),
            ])
        expectSuccess(try fixture.prefs("write", "com.example.Editor", "Recent", "-array-add", "b.txt", "-int", "3"))
        #expect(try await client.readValue("com.example.Editor", "Recent") == .array([.string("a.txt"), .string("b.txt"), .integer(3)]))
        expectSuccess(try fixture.prefs("write", "com.example.Editor", "Fresh", "-array-add", "one"))
        #expect(try await client.readValue("com.example.Editor", "Fresh") == .array([.string("one")]))
        expectSuccess(try fixture.prefs("write", "com.example.Editor", "Colors", "-dict-add", "Back", "black", "Fore", "grey"))
        #expect(try await client.readValue("com.example.Editor", "Colors") == .dictionary(["Fore": .string("grey"), "Back": .string("black")]))
        let notArray = try fixture.prefs("write", "com.example.Editor", "FontSize", "-array-add", "x")
        #expect(notArray.status == 5)
        #expect(notArray.stderr.contains("not an array"))
        expectSuccess(try fixture.prefs("write", "com.example.Editor", "Title", "hello world"))
        #expect(try await client.readValue("com.example.Editor", "Title") == .string("hello world"))
    }

    @Test("-g, -globalDomain and NSGlobalDomain all name the global domain")
    func globalDomain() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        expectSuccess(try fixture.prefs("write", "-g", "AppleLanguages", "(en, fr)"))
        #expect(try await client.readValue("NSGlobalDomain", "AppleLanguages") == .array([.string("en"), .string("fr")]))
        expectSuccess(try fixture.prefs("write", "-globalDomain", "Units", "-string", "-g"))
        #expect(try await client.readValue("NSGlobalDomain", "Units") == .string("-g"))
        #expect(try fixture.prefs("read", "-g", "Units").stdout == "-g\n")
        #expect(try fixture.prefs("read-type", "NSGlobalDomain", "Units").stdout == "Type is string\n")
        #expect(try fixture.prefs("read", "--json", "-globalDomain", "AppleLanguages").stdout.contains("\"fr\""))
    }

    @Test("read without arguments prints every domain; domains lists them; find searches them")
    func readAllDomainsAndFind() async throws {
        let fixture = try await ServiceFixture()
        expectSuccess(try fixture.prefs("write", "com.example.A", "FontName", "Menlo"))
        expectSuccess(try fixture.prefs("write", "com.example.B", "Paths", "-array", "/tmp/menlo.txt", "/etc"))
        expectSuccess(try fixture.prefs("write", "com.example.B", "Size", "-int", "3"))
        expectSuccess(try fixture.prefs("volatile", "set", "com.example.Session", "{ Font = MENLO; }"))
        #expect(try fixture.prefs("domains").stdout == "com.example.A\ncom.example.B\n")
        let all = try fixture.prefs("read")
        #expect(
            all.stdout
                == "{\n    \"com.example.A\" = {\n        FontName = Menlo;\n    };\n    \"com.example.B\" = {\n        Paths = (\n            \"/tmp/menlo.txt\",\n            \"/etc\"\n        );\n        Size = 3;\n    };\n}\n"
        )
        let found = try fixture.prefs("find", "menlo")
        expectSuccess(found)
        #expect(found.stdout.contains("Found 1 key in domain 'com.example.A': {\n    FontName = Menlo;\n}"))
        #expect(found.stdout.contains("Found 1 key in domain 'com.example.B'"))
        #expect(found.stdout.contains("Found 1 key in volatile domain 'com.example.Session'"))
        #expect(!found.stdout.contains("Size"))
        let domainMatch = try fixture.prefs("find", "example.b").stdout
        #expect(domainMatch.hasPrefix("Found 2 keys in domain 'com.example.B'") && domainMatch.contains("Size = 3;"), "\(domainMatch)")
        let nothing = try fixture.prefs("find", "zebra")
        #expect(nothing.status == 1)
        #expect(nothing.stderr.contains("zebra"))
    }

    @Test("delete a key and a domain; rename a key in one atomic change")
    func deleteAndRename() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        let watcher = try await ChangedCollector(connection: try fixture.connect(), domains: ["com.example.Editor"])
        expectSuccess(try fixture.prefs("write", "com.example.Editor", "FontSize", "-int", "14"))
        expectSuccess(try fixture.prefs("write", "com.example.Editor", "Theme", "dark"))
        try await watcher.wait(for: 2)
        expectSuccess(try fixture.prefs("rename", "com.example.Editor", "FontSize", "TextSize"))
        try await watcher.wait(for: 3)
        #expect(try await client.readDomain("com.example.Editor") == ["TextSize": .integer(14), "Theme": .string("dark")])
        let rename = try #require(watcher.signals.last)
        #expect(rename.changed == ["TextSize": .integer(14)])
        #expect(rename.removed == ["FontSize"])
        #expect(try fixture.prefs("rename", "com.example.Editor", "Nope", "Other").status == 1)

        expectSuccess(try fixture.prefs("delete", "com.example.Editor", "Theme"))
        #expect(try await client.readDomain("com.example.Editor") == ["TextSize": .integer(14)])
        #expect(try fixture.prefs("delete", "com.example.Editor", "Theme").status == 1)
        expectSuccess(try fixture.prefs("delete", "com.example.Editor"))
        #expect(try await client.domains() == [])
        let again = try fixture.prefs("delete", "com.example.Editor")
        #expect(again.status == 1)
        #expect(again.stderr.contains("prefs domains"))
    }

    @Test("volatile list, set, read, remove, apart from the persistent domain of the same name; is-forced answers false for a user's key")
    func volatileDomains() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        expectSuccess(try fixture.prefs("volatile", "set", "com.example.Session", "{ Token = abc; Count = 1; }"))
        #expect(try fixture.prefs("volatile", "list").stdout == "com.example.Session\n")
        #expect(try fixture.prefs("volatile", "read", "com.example.Session", "Token").stdout == "abc\n")
        #expect(try fixture.prefs("volatile", "read", "com.example.Session", "Nope").status == 1)
        // `write` goes to the persistent domain of the same name, never into the volatile one.
        expectSuccess(try fixture.prefs("write", "com.example.Session", "Count", "-int", "2"))
        #expect(try await client.readDomain("com.example.Session") == ["Count": .integer(2)])
        #expect(try fixture.prefs("volatile", "read", "--json", "com.example.Session").stdout == "{\n  \"Count\": \"1\",\n  \"Token\": \"abc\"\n}\n")
        #expect(try fixture.prefs("volatile", "set", "com.example.Session", "{}").status == 7)
        #expect(try fixture.prefs("domains").stdout == "com.example.Session\n")
        expectSuccess(try fixture.prefs("volatile", "remove", "com.example.Session"))
        #expect(try fixture.prefs("volatile", "list").stdout == "")
        #expect(try fixture.prefs("volatile", "remove", "com.example.Session").status == 1)
        #expect(try fixture.prefs("volatile", "read", "com.example.Session").status == 1)

        expectSuccess(try fixture.prefs("write", "com.example.Editor", "FontSize", "-int", "1"))
        #expect(try fixture.prefs("is-forced", "com.example.Editor", "FontSize").stdout == "false\n")
    }

    @Test("every verb has --help with examples, and completion scripts are generated")
    func help() throws {
        let verbs = [
            "read", "read-type", "write", "delete", "rename", "domains", "find", "export", "import",
            "monitor", "is-forced", "volatile",
        ]
        for verb in verbs {
            let result = try runCommand(ServiceFixture.prefsBinary.path, [verb, "--help"])
            #expect(result.status == 0, "\(verb) --help")
            #expect(result.stdout.contains("prefs \(verb)"), "\(verb) --help shows no example or usage")
        }
        let top = try runCommand(ServiceFixture.prefsBinary.path, ["--help"], environment: ["COLUMNS": "80"])
        #expect(top.stdout.contains("69  no session bus"))
        // On an 80-column terminal the exit-status table keeps its shape: a long line goes
        // on indented, never back at the margin.
        let table = top.stdout.components(separatedBy: "Exit status:\n").last?.components(separatedBy: "\n\n").first ?? ""
        #expect(table.contains("usage error") && table.split(separator: "\n").allSatisfy { $0.hasPrefix("  ") }, "\(table)")
        #expect(try runCommand(ServiceFixture.prefsBinary.path, ["write", "com.x", "--help"]).stdout.contains("-array-add"))
        for shell in ["bash", "zsh", "fish"] {
            let script = try runCommand(ServiceFixture.prefsBinary.path, ["--generate-completion-script", shell])
            #expect(script.status == 0)
            #expect(script.stdout.contains("read-type"))
        }
    }
}
