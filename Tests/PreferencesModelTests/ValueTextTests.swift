import Foundation
import PreferencesModel
import Testing

@Suite("Text forms of dates, data and reals")
struct ValueTextTests {
    @Test("every documented date form parses, to the same instant; other text does not")
    func dates() {
        let noon = 1_714_564_800.0  // 2024-05-01 12:00:00 UTC
        let forms = [
            "2024-05-01 12:00:00 +0000", "2024-05-01 14:00:00 +0200", "2024-05-01T12:00:00Z",
            "2024-05-01T14:00:00+02:00", "2024-05-01T14:00:00+0200", "2024-05-01T12:00:00",
            "2024-05-01 12:00:00", "  2024-05-01T12:00:00Z ",
        ]
        for form in forms {
            #expect(ValueText.parseDate(form) == noon, "\(form)")
        }
        #expect(ValueText.parseDate("2024-05-01") == noon - 12 * 3600)
        #expect(ValueText.parseDate("2024-05-01T12:00:00.250Z") == noon + 0.25)
        #expect(ValueText.parseDate("2024-05-01 12:00:00.500 +0000") == noon + 0.5)
        for bad in ["", "yesterday", "2024-13-01", "2024-05-01T25:00:00Z", "12:00:00"] {
            #expect(ValueText.parseDate(bad) == nil, "\(bad)")
        }
    }

    @Test("the old-style <*D…> form and prefs -date accept the same dates, fractional ISO 8601 included")
    func sameDatesEverywhere() throws {
        let text = "2024-05-01T12:00:00.250Z"
        #expect(try OpenStepPropertyList.parse("<*D\(text)>") == .date(secondsSince1970: 1_714_564_800.25))
        #expect(try OpenStepPropertyList.parse("<*D2024-05-01>") == .date(secondsSince1970: 1_714_521_600))
    }

    @Test("printed dates read back")
    func datesRoundTrip() {
        for seconds in [0, 1_714_564_800, -86_400.0] {
            #expect(ValueText.parseDate(ValueText.formatDate(seconds)) == seconds)
            #expect(ValueText.parseDate(ValueText.iso8601(seconds)) == seconds)
        }
        #expect(ValueText.iso8601(0.5) == "1970-01-01T00:00:00.500Z")
        #expect(ValueText.parseDate(ValueText.iso8601(0.5)) == 0.5)
    }

    @Test("hex: pairs of digits in either case, white space ignored; odd counts and other characters refused")
    func hex() throws {
        #expect(ValueText.parseHex("0aFF") == Data([0x0a, 0xff]))
        #expect(ValueText.parseHex(" 0a ff\n10 ") == Data([0x0a, 0xff, 0x10]))
        #expect(ValueText.parseHex("") == Data())
        #expect(ValueText.parseHex("0af") == nil)
        #expect(ValueText.parseHex("0g") == nil)
        #expect(ValueText.parseHex("０１") == nil)  // full-width digits are not hex
        #expect(try OpenStepPropertyList.parse("<0a ff>") == .data(Data([0x0a, 0xff])))
        #expect(throws: OpenStepPropertyList.ParseError.self) { try OpenStepPropertyList.parse("<0af>") }
        #expect(throws: OpenStepPropertyList.ParseError.self) { try OpenStepPropertyList.parse("<0a") }
    }

    @Test("reals: whole numbers without a decimal point, others shortest; the same in old-style text and coercion")
    func reals() {
        #expect(ValueText.formatReal(2) == "2")
        #expect(ValueText.formatReal(-1.5) == "-1.5")
        #expect(ValueText.formatReal(1e20) == "1e+20")
        #expect(ValueText.formatReal(0.1) == "0.1")
        #expect(OpenStepPropertyList.describe(.real(2.5)) == ValueText.formatReal(2.5))
        #expect(Coercion.string(.real(3)) == ValueText.formatReal(3))
    }

    @Test("typed value text: each scalar type reads its forms and refuses other text")
    func typed() {
        #expect(ValueText.parseTyped("14", as: .string) == .string("14"))
        #expect(ValueText.parseTyped(" -14 ", as: .integer) == .integer(-14))
        #expect(ValueText.parseTyped("+7", as: .integer) == .integer(7))
        #expect(ValueText.parseTyped("1.5", as: .integer) == nil)
        #expect(ValueText.parseTyped("9223372036854775808", as: .integer) == nil)
        #expect(ValueText.parseTyped("-2e3", as: .real) == .real(-2000))
        #expect(ValueText.parseTyped("inf", as: .real) == nil)
        #expect(ValueText.parseTyped("YES", as: .boolean) == .boolean(true))
        #expect(ValueText.parseTyped("0", as: .boolean) == .boolean(false))
        #expect(ValueText.parseTyped("maybe", as: .boolean) == nil)
        #expect(ValueText.parseTyped("2024-05-01", as: .date) == .date(secondsSince1970: 1_714_521_600))
        #expect(ValueText.parseTyped("<0a ff>", as: .data) == .data(Data([0x0a, 0xff])))
        #expect(ValueText.parseTyped("0xAB", as: .data) == .data(Data([0xab])))
        #expect(ValueText.parseTyped("abc", as: .data) == nil)
        #expect(ValueText.ScalarType.integer.expected.contains("whole number"))
    }

    @Test("compact text keeps a value on one line, keys sorted")
    func compact() {
        let value = PropertyListValue.dictionary(["b": .array([.string("x y"), .integer(1)]), "a": .dictionary([:])])
        #expect(ValueText.compact(value) == "{ a = { }; b = (\"x y\", 1); }")
        // A boolean reads as one, not as the integer old-style text makes of it.
        #expect(ValueText.compact(.array([.boolean(true), .boolean(false), .integer(1)])) == "(true, false, 1)")
        // Every string is quoted, a bare word too: "16" reads apart from 16.
        #expect(ValueText.compact(.array([.string("dark"), .string("16"), .integer(16)])) == "(\"dark\", \"16\", 16)")
    }

    @Test("a value describes itself as its text, not as the enum's case")
    func description() {
        #expect("\(PropertyListValue.integer(16))" == "16")
        #expect(String(describing: PropertyListValue.string("dark")) == "\"dark\"")
        #expect(PropertyListValue.array([.integer(1), .integer(2)]).description == "(1, 2)")
        #expect(PropertyListValue.dictionary(["Size": .integer(16)]).description == "{ Size = 16; }")
        let changed: PropertyListValue? = .integer(16)
        #expect(String(describing: changed) == "Optional(16)")
    }
}
