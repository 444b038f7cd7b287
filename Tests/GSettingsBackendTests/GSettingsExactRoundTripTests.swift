import Foundation
import PreferencesModel
import PreferencesProxy
import PrefsdTestSupport
import Testing

/// What one GSettings program writes, another reads back equal under `g_variant_equal`,
/// as with dconf: dictionaries in the order they were written, every double.
@Suite("GSettings backend: exact GVariant round trip across processes", .serialized)
struct GSettingsExactRoundTripTests {
    /// Rounds of values (key, type, GVariant text), each written by one program and read by the next.
    static let rounds: [[(key: String, type: String, text: String)]] = [
        [
            ("names", "a{ss}", "{'k': 'v', 'b': 'x', 'a': 'y'}"),
            ("dict", "a{sv}", "{'z': <'s'>, 'a': <'t'>}"),
            ("any", "v", "<{'outer': <{'y': <'1'>, 'x': <'2'>}>}>"),
            ("when", "(d)", "(nan,)"),
            ("reals", "ad", "[nan, inf, -inf, -0.0, 1.5]"),
        ],
        [
            ("names", "a{ss}", "{'a': 'y', 'b': 'x'}"),
            ("dict", "a{sv}", "{'b': <'s'>, 'a': <int32 1>}"),
            ("any", "v", "<nan>"),
            ("when", "(d)", "(inf,)"),
            ("reals", "ad", "[-inf]"),
        ],
        [
            ("any", "v", "<(-inf,)>"),
            ("when", "(d)", "(-inf,)"),
        ],
    ]

    static let writer = """
        items = json.loads(sys.argv[1])
        s = Gio.Settings.new('org.example.Test')
        for key, type, text in items:
            if not s.set_value(key, GLib.Variant.parse(GLib.VariantType.new(type), text, None, None)):
                print('refused', key); sys.exit(1)
        Gio.Settings.sync()
        print('written')
        """

    /// Prints, per key, whether the value read equals the one written under `g_variant_equal`, and what was read.
    static let reader = """
        s = Gio.Settings.new('org.example.Test')
        out = {}
        for key, type, text in json.loads(sys.argv[1]):
            got = s.get_value(key)
            out[key] = [got.equal(GLib.Variant.parse(GLib.VariantType.new(type), text, None, None)), got.print_(True)]
        print(json.dumps(out))
        """

    @Test("unordered a{ss} and a{sv}, NaN and ±inf in (d), ad and v: equal under g_variant_equal in another process, order included")
    func equalAcrossProcesses() async throws {
        let service = try await ServiceFixture()
        let fixture = try GSettingsFixture(service: service)
        for round in Self.rounds {
            let items = try String(decoding: JSONSerialization.data(withJSONObject: round.map { [$0.key, $0.type, $0.text] }), as: UTF8.self)
            let written = try fixture.python(Self.writer, [items])
            #expect(written.status == 0 && written.stdout == "written\n", "writer: \(written.stdout) \(written.stderr)")
            let read = try fixture.python(Self.reader, [items])
            #expect(read.status == 0, "reader: \(read.stderr)")
            let answers = try JSONSerialization.jsonObject(with: Data(read.stdout.utf8)) as? [String: [Any]]
            for item in round {
                let answer = answers?[item.key]
                #expect(answer?.first as? Bool == true, "\(item.key) (\(item.type)) written as \(item.text), read back as \(String(describing: answer?.last))")
            }
        }
    }

    @Test("dictionaries in sorted order stay native dictionaries; others, and a (d) of NaN or ±inf, are tagged text")
    func storedShape() async throws {
        let service = try await ServiceFixture()
        let fixture = try GSettingsFixture(service: service)
        #expect(try fixture.gsettings("set", GSettingsFixture.schema, "names", "{'b': 'x', 'a': 'y'}").status == 0)
        #expect(try fixture.gsettings("set", GSettingsFixture.schema, "dict", "{'a': <'x'>, 'b': <'y'>}").status == 0)
        #expect(try fixture.gsettings("set", GSettingsFixture.schema, "when", "(nan,)").status == 0)
        #expect(try fixture.gsettings("get", GSettingsFixture.schema, "names").stdout == "{'b': 'x', 'a': 'y'}\n")
        let proxy = PreferencesProxy(connection: try service.connect())
        defer { proxy.close() }
        let stored = try await proxy.readDomain("org.example.Test")
        #expect(stored["names"] == .string("@a{ss} {'b': 'x', 'a': 'y'}"))
        #expect(stored["dict"] == .dictionary(["a": .string("x"), "b": .string("y")]))
        #expect(stored["when"] == .string("@(d) (nan,)"))
    }
}
