import PreferencesModel
import Testing
import Xfconf

@Suite("xfconf values ↔ prefsd's stored values and GVariant types")
struct XfconfValueTests {
    @Test(
        "every scalar type keeps its type and value through the store",
        arguments: [
            (XfconfScalar.bool(true), "b", PropertyListValue.boolean(true)),
            (.int32(Int32.min), "i", .integer(Int64(Int32.min))),
            (.uint32(UInt32.max), "u", .integer(Int64(UInt32.max))),
            (.int64(Int64.min), "x", .integer(Int64.min)),
            (.uint64(UInt64(Int64.max)), "t", .integer(Int64.max)),
            (.uint64(UInt64.max), "t", .string("@t uint64 18446744073709551615")),
            (.double(0.1), "d", .real(0.1)),
            (.double(-0.0), "d", .real(-0.0)),
            (.string("Adwaita"), "s", .string("Adwaita")),
            (.string("@u 5"), "s", .string("@u 5")),
            (.string(""), "s", .string("")),
            (.uchar(255), "y", .integer(255)),
            (.int16(Int16.min), "n", .integer(Int64(Int16.min))),
            (.uint16(UInt16.max), "q", .integer(Int64(UInt16.max))),
        ])
    func scalar(value: XfconfScalar, type: String, stored: PropertyListValue) {
        let xfconf = XfconfValue.scalar(value)
        #expect(xfconf.storedType == type)
        #expect(value.gvariantType == type)
        #expect(xfconf.storedValue == stored)
        #expect(XfconfValue(storedValue: stored, type: type) == xfconf)
    }

    @Test("an array of one type is stored as an array of that GVariant type, natively")
    func homogeneousArray() {
        let value = XfconfValue.array([.string("a.txt"), .string("b.txt")])
        #expect(value.storedType == "as")
        #expect(value.storedValue == .array([.string("a.txt"), .string("b.txt")]))
        #expect(XfconfValue(storedValue: value.storedValue, type: "as") == value)

        let numbers = XfconfValue.array([.uint32(1), .uint32(UInt32.max)])
        #expect(numbers.storedType == "au")
        #expect(numbers.storedValue == .array([.integer(1), .integer(Int64(UInt32.max))]))
        #expect(XfconfValue(storedValue: numbers.storedValue, type: "au") == numbers)
    }

    @Test(
        "a mixed or empty array is av, and every item keeps its type",
        arguments: [
            XfconfValue.array([]),
            .array([.int32(345), .double(42.4), .string("cheese")]),
            .array([.string("x"), .double(1.5), .bool(false)]),
            .array([.uint64(UInt64.max), .int64(-1)]),
            .array([.uchar(1), .int16(-2), .uint16(3), .uint32(4), .int32(5)]),
        ])
    func mixedArray(value: XfconfValue) {
        #expect(value.storedType == "av")
        #expect(XfconfValue(storedValue: value.storedValue, type: "av") == value)
    }

    @Test("an av of canonical items is stored as an array, one of other items as GVariant's tagged text")
    func avStorage() {
        #expect(XfconfValue.array([.string("x"), .double(1.5)]).storedValue == .array([.string("x"), .real(1.5)]))
        #expect(XfconfValue.array([]).storedValue == .array([]))
        #expect(XfconfValue.array([.int32(1), .string("a")]).storedValue == .string("@av [<1>, <'a'>]"))
    }

    @Test(
        "a value written without a type, or no longer of its type, is read by its shape",
        arguments: [
            (PropertyListValue.integer(14), String?.none, XfconfValue.scalar(.int64(14))),
            (.integer(1 << 40), "i", .scalar(.int64(1 << 40))),
            (.integer(-1), "u", .scalar(.int64(-1))),
            (.string("dark"), "b", .scalar(.string("dark"))),
            (.real(2.5), nil, .scalar(.double(2.5))),
            (.boolean(true), "a{sv}", .scalar(.bool(true))),
            (.array([.string("a"), .integer(2)]), nil, .array([.string("a"), .int64(2)])),
            (.integer(7), "q", .scalar(.uint16(7))),
        ])
    func natural(stored: PropertyListValue, type: String?, value: XfconfValue) {
        #expect(XfconfValue(storedValue: stored, type: type) == value)
    }

    @Test(
        "values xfconf cannot carry have no xfconf value",
        arguments: [
            PropertyListValue.data(.init([1, 2])), .date(secondsSince1970: 0), .dictionary(["a": .integer(1)]),
            .array([.array([])]), .array([.dictionary([:])]),
        ])
    func uncarried(stored: PropertyListValue) {
        #expect(XfconfValue(storedValue: stored, type: nil) == nil)
    }

    @Test("the types xfconf carries", arguments: ["b", "i", "u", "x", "t", "d", "s", "y", "n", "q", "ab", "ai", "as", "aq", "av"])
    func carried(type: String) { #expect(XfconfValue.carries(type: type)) }

    @Test("the types it does not", arguments: ["v", "o", "g", "h", "aay", "aav", "a{sv}", "(d)", "mi", "", "a"])
    func notCarried(type: String) { #expect(!XfconfValue.carries(type: type)) }
}
