import Foundation
import PreferencesModel
import Testing

@Suite("Old-style property-list text")
struct OpenStepPropertyListTests {
    @Test(
        "arrays, dictionaries, strings and data parse",
        arguments: [
            ("(de, fr)", PropertyListValue.array([.string("de"), .string("fr")])),
            ("( )", .array([])),
            ("(a, \"b c\",)", .array([.string("a"), .string("b c")])),
            ("{ Size = 12; Name = \"Mono Bold\"; }", .dictionary(["Size": .string("12"), "Name": .string("Mono Bold")])),
            ("{a = (1, {b = c;});}", .dictionary(["a": .array([.string("1"), .dictionary(["b": .string("c")])])])),
            ("<0aff 10>", .data(Data([0x0a, 0xff, 0x10]))),
            ("\"tab\\there \\\"q\\\" \\U00e9\"", .string("tab\there \"q\" é")),
            ("plain/path:with-dots.1", .string("plain/path:with-dots.1")),
            ("/* note */ ( x // comment\n )", .array([.string("x")])),
            ("<*I42>", .integer(42)),
            ("<*R1.5>", .real(1.5)),
            ("<*BY>", .boolean(true)),
            ("<*BN>", .boolean(false)),
            ("<*D2023-11-14 22:13:20 +0000>", .date(secondsSince1970: 1_700_000_000)),
        ])
    func parses(_ text: String, _ expected: PropertyListValue) throws {
        #expect(try OpenStepPropertyList.parse(text) == expected)
    }

    @Test(
        "malformed text is refused with a reason",
        arguments: [
            "(a, b", "{a = b}", "{a b;}", "<0g>", "<abc>", "\"open", "(a) trailing", "", "{ = b; }", "<*Ix>", "<*Q1>",
        ])
    func refuses(_ text: String) {
        #expect(throws: OpenStepPropertyList.ParseError.self) { try OpenStepPropertyList.parse(text) }
    }

    @Test("nesting past the limit is refused")
    func nesting() throws {
        let deep = String(repeating: "(", count: 33) + String(repeating: ")", count: 33)
        #expect(throws: OpenStepPropertyList.ParseError.self) { try OpenStepPropertyList.parse(deep) }
        let ok = String(repeating: "(", count: 32) + String(repeating: ")", count: 32)
        #expect(try OpenStepPropertyList.parse(ok).nestingDepth == 32)
    }

    @Test("describe prints like defaults and strings parse back")
    func describe() throws {
        let value = PropertyListValue.dictionary([
            "FontSize": .integer(14), "Name": .string("Mono Bold"), "Recent": .array([.string("a.txt"), .string("b")]),
            "On": .boolean(true), "Ratio": .real(0.5),
        ])
        #expect(
            OpenStepPropertyList.describe(value)
                == """
                {
                    FontSize = 14;
                    Name = "Mono Bold";
                    On = 1;
                    Ratio = 0.5;
                    Recent =     (
                        "a.txt",
                        b
                    );
                }
                """.replacingOccurrences(of: "=     (", with: "= ("))
        let strings = PropertyListValue.array([.string("a \"q\"\n"), .string(""), .string("é")])
        #expect(try OpenStepPropertyList.parse(OpenStepPropertyList.describe(strings)) == strings)
    }
}
