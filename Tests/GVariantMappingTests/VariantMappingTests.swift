import CGLib
import GVariantMapping
import Testing

/// The one GVariant mapping, on the cases the README's GSettings section and
/// docs/gsettings.md describe: each schema-typed value maps to the wire value given, and
/// reads back equal (`g_variant_equal`) with its type; wire values that do not fit a type
/// read as unset.
@Suite("GVariant mapping: schema-typed GVariant ↔ wire GVariant")
struct VariantMappingTests {
    /// A schema type, a value of it as GVariant text, and its wire value as GVariant text
    /// (annotated, so that it parses alone).
    static let cases: [(type: String, text: String, wire: String)] = [
        ("b", "true", "true"),
        ("y", "0xff", "int64 255"),
        ("n", "-3", "int64 -3"),
        ("q", "65535", "int64 65535"),
        ("i", "33", "int64 33"),
        ("u", "600", "int64 600"),
        ("x", "-9000000000", "int64 -9000000000"),
        ("t", "100", "int64 100"),
        ("t", "18446744073709551615", "'@t uint64 18446744073709551615'"),
        ("d", "1.25", "1.25"),
        ("s", "'prefer-dark'", "'prefer-dark'"),
        ("s", "'@(ii) (1, 2)'", "'@(ii) (1, 2)'"),
        ("ay", "[0x00, 0x0a]", "@ay [0x00, 0x0a]"),
        ("(d)", "(1700000000.5,)", "(1700000000.5,)"),
        ("(d)", "(nan,)", "'@(d) (nan,)'"),
        ("(d)", "(-inf,)", "'@(d) (-inf,)'"),
        ("as", "['caps:none', 'compose:ralt']", "[<'caps:none'>, <'compose:ralt'>]"),
        ("as", "[]", "@av []"),
        ("aas", "[['a'], [], ['b', 'c']]", "[<[<'a'>]>, <@av []>, <[<'b'>, <'c'>]>]"),
        ("ad", "[inf, -0.0, 2.5]", "[<inf>, <-0.0>, <2.5>]"),
        ("ai", "[1, 2]", "[<int64 1>, <int64 2>]"),
        ("a{ss}", "{'a': 'b', 'k': 'v'}", "{'a': <'b'>, 'k': <'v'>}"),
        ("a{ss}", "{'k': 'v', 'a': 'b'}", "\"@a{ss} {'k': 'v', 'a': 'b'}\""),
        ("a{ss}", "{'a': 'b', 'a': 'c'}", "\"@a{ss} {'a': 'b', 'a': 'c'}\""),
        ("a{sv}", "{'a': <int32 1>, 'z': <'s'>}", "\"@a{sv} {'a': <1>, 'z': <'s'>}\""),
        ("a{sv}", "{'a': <int64 1>, 'z': <'s'>}", "{'a': <int64 1>, 'z': <'s'>}"),
        ("a{ias}", "{1: ['x']}", "'@a{ias} {1: [\\'x\\']}'"),
        ("aa{sv}", "[{'b': <{'position': <int64 1>}>}]", "[<{'b': <{'position': <int64 1>}>}>]"),
        ("(ii)", "(1, 2)", "'@(ii) (1, 2)'"),
        ("(uu)", "(80, 24)", "'@(uu) (uint32 80, uint32 24)'"),
        ("ms", "just 'x'", "\"@ms 'x'\""),
        ("mu", "nothing", "'@mu nothing'"),
        ("o", "'/a/b'", "\"@o objectpath '/a/b'\""),
        ("v", "<'x'>", "'x'"),
        ("v", "<int64 7>", "int64 7"),
        ("v", "<[<'a'>]>", "[<'a'>]"),
        ("v", "<int32 1>", "'@v <1>'"),
        ("v", "<'@x'>", "\"@v <'@x'>\""),
        ("v", "<(1, 'two')>", "\"@v <(1, 'two')>\""),
    ]

    @Test("each documented case maps to its wire value and reads back equal with its type", arguments: cases.indices)
    func roundTrip(_ index: Int) throws {
        let (type, text, wireText) = Self.cases[index]
        let value = try VariantText.parse(text, type: type)
        defer { g_variant_unref(value) }
        let expected = try VariantText.parse(wireText)
        defer { g_variant_unref(expected) }
        let wire = VariantMapping.wire(from: value)
        defer { g_variant_unref(wire) }
        #expect(g_variant_is_floating(wire) == 0)
        #expect(
            g_variant_equal(UnsafeRawPointer(wire), UnsafeRawPointer(expected)) != 0,
            "\(type) \(text): wire \(VariantText.print(wire, annotated: true)), expected \(wireText)")
        #expect(VariantMapping.isCanonical(String(cString: g_variant_get_type_string(wire))), "\(type) \(text)")
        let back = try #require(VariantMapping.settingsValue(fromWire: wire, type: type), "\(type) \(text) does not read back")
        defer { g_variant_unref(back) }
        #expect(g_variant_is_floating(back) == 0)
        #expect(
            g_variant_equal(UnsafeRawPointer(back), UnsafeRawPointer(value)) != 0,
            "\(type) \(text) reads back as \(VariantText.print(back, annotated: true))")
    }

    /// Wire values (GVariant text) and a type they do not fit.
    static let misfits: [(wire: String, type: String)] = [
        ("int64 256", "y"),
        ("int64 -1", "u"),
        ("int64 -1", "t"),
        ("int64 2147483648", "i"),
        ("'text'", "i"),
        ("int64 1", "d"),
        ("1.5", "x"),
        ("'@(ii) nonsense'", "(ii)"),
        ("'@(ii) (1, 2)'", "(ss)"),
        ("[<int64 1>]", "as"),
        ("[<'a'>]", "a{ss}"),
        ("{'a': <'b'>}", "as"),
        ("true", "s"),
    ]

    @Test("a wire value that does not fit the type reads as unset", arguments: misfits.indices)
    func misfit(_ index: Int) throws {
        let (wireText, type) = Self.misfits[index]
        let wire = try VariantText.parse(wireText)
        defer { g_variant_unref(wire) }
        let read = VariantMapping.settingsValue(fromWire: wire, type: type)
        #expect(read == nil, "\(wireText) read as \(type)")
        if let read { g_variant_unref(read) }
    }

    @Test("a string key reads tagged text as the string itself")
    func stringKeyReadsTaggedText() throws {
        let wire = try VariantText.parse("'@(ii) (1, 2)'")
        defer { g_variant_unref(wire) }
        let read = try #require(VariantMapping.settingsValue(fromWire: wire, type: "s"))
        defer { g_variant_unref(read) }
        #expect(String(cString: g_variant_get_string(read, nil)) == "@(ii) (1, 2)")
    }

    @Test("GVariant text: printed with or without annotations; parse errors carry GLib's reason")
    func text() throws {
        let value = try VariantText.parse("uint32 600")
        defer { g_variant_unref(value) }
        #expect(VariantText.print(value, annotated: true) == "uint32 600")
        #expect(VariantText.print(value, annotated: false) == "600")
        #expect(throws: VariantText.ParseError.self) { try VariantText.parse("'unterminated") }
        #expect(throws: VariantText.ParseError(detail: "(( is not a GVariant type")) { try VariantText.parse("1", type: "((") }
    }
}
