import Foundation
import PreferencesModel
import PreferencesProxy
import PrefsdTestSupport
import Testing

@Suite("GSettings backend: every type a schema can declare", .serialized)
struct GSettingsTypeTests {
    /// One value per key of the test schema: GVariant text, and what prefsd must hold.
    static let values: [(key: String, type: String, text: String, stored: PropertyListValue)] = [
        ("text", "s", "'héllo wörld'", .string("héllo wörld")),
        ("flag", "b", "true", .boolean(true)),
        ("int32", "i", "-42", .integer(-42)),
        ("int64", "x", "9000000000", .integer(9_000_000_000)),
        ("int16", "n", "-300", .integer(-300)),
        ("uint16", "q", "65000", .integer(65000)),
        ("uint32", "u", "4000000000", .integer(4_000_000_000)),
        ("uint64", "t", "18446744073709551615", .string("@t uint64 18446744073709551615")),
        ("byte", "y", "200", .integer(200)),
        ("real", "d", "2.25", .real(2.25)),
        ("strings", "as", "['x', 'y z']", .array([.string("x"), .string("y z")])),
        ("bytes", "ay", "[byte 0x00, 0xff, 0x0a]", .data(Data([0, 255, 10]))),
        ("dict", "a{sv}", "{'a': <int32 1>, 'b': <'s'>}", .string("@a{sv} {'a': <1>, 'b': <'s'>}")),
        ("names", "a{ss}", "{'a': 'b', 'k': 'v'}", .dictionary(["a": .string("b"), "k": .string("v")])),
        ("pair", "(ii)", "(1, -2)", .string("@(ii) (1, -2)")),
        ("pairs", "a(ss)", "[('a', 'b'), ('c', 'd')]", .string("@a(ss) [('a', 'b'), ('c', 'd')]")),
        ("maybe", "ms", "just 'x'", .string("@ms 'x'")),
        ("path", "o", "'/org/example/x'", .string("@o objectpath '/org/example/x'")),
        ("any", "v", "<'text'>", .string("text")),
        ("numbers", "ai", "[1, 2, 3]", .array([.integer(1), .integer(2), .integer(3)])),
        ("nested", "aas", "[['a'], [], ['b', 'c']]", .array([.array([.string("a")]), .array([]), .array([.string("b"), .string("c")])])),
    ]

    static let writer = """
        items = json.loads(sys.argv[1])
        s = Gio.Settings.new('org.example.Test')
        for key, type, text in items:
            value = GLib.Variant.parse(GLib.VariantType.new(type), text, None, None)
            if not s.set_value(key, value):
                print('refused', key); sys.exit(1)
        Gio.Settings.sync()
        print(json.dumps({key: GLib.Variant.parse(GLib.VariantType.new(type), text, None, None).print_(True) for key, type, text in items}))
        """

    static let reader = """
        s = Gio.Settings.new('org.example.Test')
        print(json.dumps({key: s.get_value(key).print_(True) for key in json.loads(sys.argv[1])}))
        """

    @Test("each value written by one PyGObject program reads back identically in another, stored in prefsd by the documented shape")
    func roundTrip() async throws {
        let service = try await ServiceFixture()
        let fixture = try GSettingsFixture(service: service)
        let items = try String(decoding: JSONSerialization.data(withJSONObject: Self.values.map { [$0.key, $0.type, $0.text] }), as: UTF8.self)
        let written = try fixture.python(Self.writer, [items])
        #expect(written.status == 0, "writer: \(written.stdout) \(written.stderr)")
        let expected = try JSONSerialization.jsonObject(with: Data(written.stdout.utf8)) as? [String: String]

        let keys = try String(decoding: JSONSerialization.data(withJSONObject: Self.values.map(\.key)), as: UTF8.self)
        let read = try fixture.python(Self.reader, [keys])
        #expect(read.status == 0, "reader: \(read.stderr)")
        let actual = try JSONSerialization.jsonObject(with: Data(read.stdout.utf8)) as? [String: String]
        for item in Self.values {
            #expect(actual?[item.key] != nil && actual?[item.key] == expected?[item.key], "\(item.key) (\(item.type))")
        }

        let proxy = PreferencesProxy(connection: try service.connect())
        defer { proxy.close() }
        let stored = try await proxy.readDomain("org.example.Test")
        for item in Self.values {
            #expect(stored[item.key] == item.stored, "\(item.key) (\(item.type)) is stored as \(String(describing: stored[item.key]))")
        }
    }

    @Test("gsettings get, set, reset, list-keys and an enum key; a stored value of the wrong shape reads as the schema default")
    func commandLine() async throws {
        let service = try await ServiceFixture()
        let fixture = try GSettingsFixture(service: service)
        #expect(try fixture.gsettings("get", GSettingsFixture.schema, "text").stdout == "'hello'\n")
        let keys = try fixture.gsettings("list-keys", GSettingsFixture.schema).stdout.split(separator: "\n")
        #expect(keys.count == 24 && keys.contains("pairs"))

        #expect(try fixture.gsettings("set", GSettingsFixture.schema, "color", "green").status == 0)
        #expect(try fixture.gsettings("get", GSettingsFixture.schema, "color").stdout == "'green'\n")
        #expect(try fixture.gsettings("set", GSettingsFixture.schema, "uint16", "7").status == 0)
        #expect(try fixture.gsettings("get", GSettingsFixture.schema, "uint16").stdout == "uint16 7\n")

        let proxy = PreferencesProxy(connection: try service.connect())
        defer { proxy.close() }
        #expect(try await proxy.read("org.example.Test", "color") == .string("green"))
        #expect(try fixture.gsettings("reset", GSettingsFixture.schema, "color").status == 0)
        #expect(try await proxy.readIfPresent("org.example.Test", "color") == nil)
        #expect(try fixture.gsettings("get", GSettingsFixture.schema, "color").stdout == "'red'\n")

        // Values other programs stored that do not fit the schema's type: the default.
        try await proxy.write("org.example.Test", "int32", .string("nope"))
        try await proxy.write("org.example.Test", "byte", .integer(300))
        try await proxy.write("org.example.Test", "pair", .string("@(ss) ('a', 'b')"))
        try await proxy.write("org.example.Test", "real", .integer(3))
        #expect(try fixture.gsettings("get", GSettingsFixture.schema, "int32").stdout == "5\n")
        #expect(try fixture.gsettings("get", GSettingsFixture.schema, "byte").stdout == "byte 0x0b\n")
        #expect(try fixture.gsettings("get", GSettingsFixture.schema, "pair").stdout == "(0, 0)\n")
        #expect(try fixture.gsettings("get", GSettingsFixture.schema, "real").stdout == "1.5\n")
        // …and ones that do, written by hand as the README shows.
        try await proxy.write("org.example.Test", "pair", .string("@(ii) (3, 4)"))
        #expect(try fixture.gsettings("get", GSettingsFixture.schema, "pair").stdout == "(3, 4)\n")
    }

    @Test("a relocatable schema at a deep path with characters a domain cannot hold lands in the documented domain and key")
    func relocatable() async throws {
        let service = try await ServiceFixture()
        let fixture = try GSettingsFixture(service: service)
        let path = "/org/example/terminal/profiles:/:b1dcc9dd-5262/"
        let schema = "\(GSettingsFixture.profileSchema):\(path)"
        #expect(try fixture.gsettings("set", schema, "font", "'Mono 12'").status == 0)
        #expect(try fixture.gsettings("set", schema, "size", "(100, 30)").status == 0)
        #expect(try fixture.gsettings("get", schema, "size").stdout == "(uint32 100, uint32 30)\n")
        let proxy = PreferencesProxy(connection: try service.connect())
        defer { proxy.close() }
        #expect(
            try await proxy.readDomain("org.example.terminal") == [
                "profiles:/:b1dcc9dd-5262/font": .string("Mono 12"),
                "profiles:/:b1dcc9dd-5262/size": .string("@(uu) (uint32 100, uint32 30)"),
            ])
    }
}
