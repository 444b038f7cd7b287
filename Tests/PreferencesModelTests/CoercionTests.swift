import Foundation
import PreferencesModel
import Testing

/// The coercion table of `Coercion`, row by row.
@Suite("Coercions of the typed getters")
struct CoercionTests {
    @Test("stored boolean")
    func boolean() {
        #expect(Coercion.bool(.boolean(true)) == true)
        #expect(Coercion.integer(.boolean(true)) == 1)
        #expect(Coercion.double(.boolean(false)) == 0)
        #expect(Coercion.string(.boolean(true)) == "1")
        #expect(Coercion.stringArray(.boolean(true)) == nil)
    }

    @Test("stored integer")
    func integer() {
        #expect(Coercion.bool(.integer(0)) == false)
        #expect(Coercion.bool(.integer(-3)) == true)
        #expect(Coercion.integer(.integer(42)) == 42)
        #expect(Coercion.double(.integer(42)) == 42.0)
        #expect(Coercion.string(.integer(-7)) == "-7")
    }

    @Test("stored real")
    func real() {
        #expect(Coercion.bool(.real(0.0)) == false)
        #expect(Coercion.bool(.real(0.5)) == true)
        #expect(Coercion.integer(.real(3.9)) == 3)
        #expect(Coercion.integer(.real(-3.9)) == -3)
        #expect(Coercion.integer(.real(.infinity)) == 0)
        #expect(Coercion.integer(.real(1e300)) == 0)
        #expect(Coercion.double(.real(2.5)) == 2.5)
        #expect(Coercion.string(.real(2.5)) == "2.5")
        #expect(Coercion.string(.real(3)) == "3")
    }

    @Test(
        "stored string",
        arguments: [
            ("YES", true), ("yes", true), ("true", true), ("TRUE", true), ("1", true), (" 2 ", true), ("0.5", true),
            ("NO", false), ("false", false), ("0", false), ("", false), ("yellow", false), ("maybe", false),
        ])
    func stringToBool(_ text: String, _ expected: Bool) {
        #expect(Coercion.bool(.string(text)) == expected)
    }

    @Test("stored string to numbers")
    func stringToNumbers() {
        #expect(Coercion.integer(.string("42")) == 42)
        #expect(Coercion.integer(.string(" -5 ")) == -5)
        #expect(Coercion.integer(.string("3.7")) == 3)
        #expect(Coercion.integer(.string("abc")) == nil)
        #expect(Coercion.double(.string("2.25")) == 2.25)
        #expect(Coercion.double(.string("x")) == nil)
        #expect(Coercion.string(.string("text")) == "text")
    }

    @Test("dates, data and collections convert only to their own type")
    func others() {
        let values: [PropertyListValue] = [.date(secondsSince1970: 5), .data(Data([1])), .array([.string("a")]), .dictionary(["a": .integer(1)])]
        for value in values {
            #expect(Coercion.bool(value) == nil)
            #expect(Coercion.integer(value) == nil)
            #expect(Coercion.double(value) == nil)
            #expect(Coercion.string(value) == nil)
        }
        #expect(Coercion.stringArray(.array([.string("a"), .string("b")])) == ["a", "b"])
        #expect(Coercion.stringArray(.array([.string("a"), .integer(1)])) == nil)
        #expect(Coercion.stringArray(.array([])) == [])
    }

    @Test("URLs from strings")
    func urls() {
        #expect(Coercion.url(.string("https://example.com/a")) == URL(string: "https://example.com/a"))
        #expect(Coercion.url(.string("/tmp/file"))?.path == "/tmp/file")
        #expect(Coercion.url(.string("/tmp/file"))?.isFileURL == true)
        #expect(Coercion.url(.integer(1)) == nil)
    }
}
