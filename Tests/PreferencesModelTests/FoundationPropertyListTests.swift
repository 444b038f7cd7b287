import Foundation
import PreferencesModel
import Testing

@Suite("XML and binary property lists")
struct FoundationPropertyListTests {
    static let sample = PropertyListValue.dictionary([
        "string": .string("héllo"), "integer": .integer(-42), "big": .integer(Int64.max), "real": .real(2),
        "true": .boolean(true), "false": .boolean(false), "data": .data(Data([0, 1, 255])),
        "date": .date(secondsSince1970: 1_700_000_000), "array": .array([.integer(1), .string("x")]),
        "dictionary": .dictionary(["nested": .array([])]),
    ])

    @Test("XML round trip keeps every type")
    func xmlRoundTrip() throws {
        let data = try Self.sample.xmlPropertyListData()
        #expect(try PropertyListValue(propertyListData: data) == Self.sample)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("<integer>-42</integer>") && text.contains("<real>2") && text.contains("<true/>"))
    }

    @Test("binary property lists are read")
    func binary() throws {
        let data = try PropertyListSerialization.data(fromPropertyList: Self.sample.foundationObject, format: .binary, options: 0)
        #expect(data.starts(with: Array("bplist".utf8)))
        #expect(try PropertyListValue(propertyListData: data) == Self.sample)
    }

    @Test("garbage is refused with a reason")
    func garbage() {
        #expect(throws: PreferencesModelError.self) { try PropertyListValue(propertyListData: Data("<plist><dict><key>a".utf8)) }
        #expect(throws: PreferencesModelError.self) { try PropertyListValue(propertyListData: Data([0xff, 0x00, 0x12])) }
    }

    @Test("a Float becomes the real its decimal text spells, as a property list stores it")
    func floats() throws {
        #expect(PropertyListValue.real(float: 12.34) == .real(12.34))
        #expect(try PropertyListValue(foundation: Float(12.34)) == .real(12.34))
        #expect(try PropertyListValue(foundation: NSNumber(value: Float(0.1))) == .real(0.1))
        #expect(try PropertyListValue(foundation: [Float(1.1), Float(-2.5)]) == .array([.real(1.1), .real(-2.5)]))
        #expect(try PropertyListValue(foundation: ["f": NSNumber(value: Float(3.3))]) == .dictionary(["f": .real(3.3)]))
        // Doubles keep every bit.
        #expect(try PropertyListValue(foundation: 0.1 + 0.2) == .real(0.1 + 0.2))
        #expect(try PropertyListValue(foundation: NSNumber(value: 12.34000015258789)) == .real(12.34000015258789))
        #expect(PropertyListValue.real(float: .infinity) == .real(.infinity))
    }
}
