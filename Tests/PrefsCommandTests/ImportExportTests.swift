import Foundation
import PreferencesModel
import PrefsdTestSupport
import Testing

@Suite("prefs export and import: XML and binary property lists other tools read and write")
struct ImportExportTests {
    /// One value of every type (dates on whole seconds: XML property lists keep no fractions).
    static let everyType: [String: PropertyListValue] = [
        "s": .string("text with \"quotes\" & <angles>"),
        "i": .integer(-9_000_000_000),
        "r": .real(1.5),
        "whole": .real(2),
        "t": .boolean(true),
        "f": .boolean(false),
        "d": .data(Data([0, 0xff, 0x10])),
        "date": .date(secondsSince1970: 1_714_564_800),
        "a": .array([.string("x"), .integer(2), .array([])]),
        "h": .dictionary(["k": .string("v"), "n": .dictionary([:])]),
    ]

    private func python(_ script: String, _ arguments: [String] = []) throws -> (status: Int32, stdout: String, stderr: String) {
        try runCommand("/usr/bin/python3", ["-c", script] + arguments)
    }

    @Test("export then import round-trips every type; the file has the shape defaults export writes")
    func roundTrip() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        for (key, value) in Self.everyType { try await client.write("com.example.All", key, value) }
        let file = fixture.bus.directory.appendingPathComponent("all.plist")
        expectSuccess(try fixture.prefs("export", "com.example.All", file.path))
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(text.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\""))
        #expect(text.contains("<plist version=\"1.0\">\n<dict>\n\t<key>"))

        expectSuccess(try fixture.prefs("delete", "com.example.All"))
        expectSuccess(try fixture.prefs("import", "com.example.All", file.path))
        #expect(try await client.readDomain("com.example.All") == Self.everyType)

        // To standard output, and back through standard input.
        let exported = try fixture.prefs("export", "com.example.All", "-")
        expectSuccess(exported)
        #expect(exported.stdout == text)
        expectSuccess(try fixture.prefs(["import", "com.example.Copy", "-"], input: Data(exported.stdout.utf8)))
        #expect(try await client.readDomain("com.example.Copy") == Self.everyType)
    }

    @Test("Python's plistlib reads what export writes, with every type right")
    func plistlibReadsExport() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        for (key, value) in Self.everyType { try await client.write("com.example.All", key, value) }
        let file = fixture.bus.directory.appendingPathComponent("all.plist")
        expectSuccess(try fixture.prefs("export", "com.example.All", file.path))
        let result = try python(
            """
            import plistlib, sys
            d = plistlib.load(open(sys.argv[1], 'rb'))
            for k in sorted(d):
                print(k, type(d[k]).__name__, repr(d[k]))
            """, [file.path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            result.stdout == """
                a list ['x', 2, []]
                d bytes b'\\x00\\xff\\x10'
                date datetime datetime.datetime(2024, 5, 1, 12, 0)
                f bool False
                h dict {'k': 'v', 'n': {}}
                i int -9000000000
                r float 1.5
                s str 'text with "quotes" & <angles>'
                t bool True
                whole float 2.0

                """)
    }

    @Test("import reads a binary property list written by plistlib, from a file and from standard input")
    func importBinary() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        let file = fixture.bus.directory.appendingPathComponent("binary.plist")
        let written = try python(
            """
            import plistlib, sys, datetime
            value = {"s": "str", "i": 42, "r": 0.25, "t": True, "d": b"\\x01\\x02",
                     "date": datetime.datetime(2023, 11, 14, 22, 13, 20), "a": ["x", 1], "h": {"k": False}}
            open(sys.argv[1], "wb").write(plistlib.dumps(value, fmt=plistlib.FMT_BINARY))
            """, [file.path])
        #expect(written.status == 0, "\(written.stderr)")
        #expect(try Data(contentsOf: file).prefix(6) == Data("bplist".utf8))
        let expected: [String: PropertyListValue] = [
            "s": .string("str"), "i": .integer(42), "r": .real(0.25), "t": .boolean(true), "d": .data(Data([1, 2])),
            "date": .date(secondsSince1970: 1_700_000_000), "a": .array([.string("x"), .integer(1)]),
            "h": .dictionary(["k": .boolean(false)]),
        ]
        expectSuccess(try fixture.prefs("import", "com.example.Binary", file.path))
        #expect(try await client.readDomain("com.example.Binary") == expected)
        expectSuccess(try fixture.prefs(["import", "com.example.Piped", "-"], input: try Data(contentsOf: file)))
        #expect(try await client.readDomain("com.example.Piped") == expected)
    }

    @Test("import reads a file in the shape macOS defaults export writes, replacing the domain")
    func importMacOSExport() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        try await client.write("com.apple.finder", "Stale", .string("gone after import"))
        let file = fixture.bus.directory.appendingPathComponent("finder.plist")
        try """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        \t<key>AppleShowAllFiles</key>
        \t<true/>
        \t<key>FXPreferredViewStyle</key>
        \t<string>Nlsv</string>
        \t<key>FXRecentFolders</key>
        \t<array>
        \t\t<dict>
        \t\t\t<key>name</key>
        \t\t\t<string>Downloads</string>
        \t\t</dict>
        \t</array>
        \t<key>FK_SidebarWidth</key>
        \t<integer>176</integer>
        \t<key>Zoom</key>
        \t<real>1.25</real>
        \t<key>LastTrashCheck</key>
        \t<date>2023-11-14T22:13:20Z</date>
        \t<key>Bookmark</key>
        \t<data>
        \tAAEC/w==
        \t</data>
        </dict>
        </plist>

        """.write(to: file, atomically: true, encoding: .utf8)
        expectSuccess(try fixture.prefs("import", "com.apple.finder", file.path))
        #expect(
            try await client.readDomain("com.apple.finder") == [
                "AppleShowAllFiles": .boolean(true), "FXPreferredViewStyle": .string("Nlsv"),
                "FXRecentFolders": .array([.dictionary(["name": .string("Downloads")])]), "FK_SidebarWidth": .integer(176),
                "Zoom": .real(1.25), "LastTrashCheck": .date(secondsSince1970: 1_700_000_000), "Bookmark": .data(Data([0, 1, 2, 0xff])),
            ])
    }

    @Test("import refuses what is not a dictionary property list; files that cannot be used exit 74")
    func importRefusals() async throws {
        let fixture = try await ServiceFixture()
        let garbage = try fixture.prefs(["import", "com.example.X", "-"], input: Data("not a plist at all <".utf8))
        #expect(garbage.status == 5)
        #expect(garbage.stderr.hasPrefix("prefs: "))
        let array = try fixture.prefs(["import", "com.example.X", "-"], input: try PropertyListValue.array([]).xmlPropertyListData())
        #expect(array.status == 5)
        #expect(array.stderr.contains("not a dictionary"))
        let missing = try fixture.prefs("import", "com.example.X", "/nonexistent/file.plist")
        #expect(missing.status == 74)
        #expect(missing.stderr.contains("/nonexistent/file.plist"))
        try await ServiceClient(connection: try fixture.connect()).write("com.example.X", "K", .integer(1))
        #expect(try fixture.prefs("export", "com.example.X", "/nonexistent/dir/out.plist").status == 74)
        #expect(try fixture.prefs("export", "com.example.Missing", "-").status == 1)
    }
}
