import Foundation

extension PropertyListValue {
    /// Converts an object graph from `PropertyListSerialization` (or `UserDefaults`):
    /// `String`, `Bool`, `NSNumber`/integers/reals, `Data`, `Date`, arrays and string-keyed
    /// dictionaries of those.
    /// - Throws: `PreferencesModelError.invalidValue` naming the first object that is not a
    ///   property-list value.
    public init(foundation object: Any, maximumNesting: Int = 32) throws(PreferencesModelError) {
        self = try Self.convert(object, depth: 0, limit: maximumNesting)
    }

    private static func convert(_ object: Any, depth: Int, limit: Int) throws(PreferencesModelError) -> PropertyListValue {
        switch object {
        case let text as String: return .string(text)
        case let flag as Bool where type(of: object) == Bool.self: return .boolean(flag)
        case let data as Data: return .data(data)
        case let date as Date: return .date(date)
        case let float as Float where type(of: object) == Float.self: return .real(float: float)
        case let number as NSNumber:
            switch number.objCType.pointee {
            case CChar(UInt8(ascii: "f")): return .real(float: number.floatValue)
            case CChar(UInt8(ascii: "d")): return .real(number.doubleValue)
            case CChar(UInt8(ascii: "c")), CChar(UInt8(ascii: "B")): return .boolean(number.boolValue)
            case CChar(UInt8(ascii: "Q")), CChar(UInt8(ascii: "L")):
                guard let exact = Int64(exactly: number.uint64Value) else {
                    throw .invalidValue(reason: "the integer \(number.uint64Value) is above \(Int64.max)")
                }
                return .integer(exact)
            default: return .integer(number.int64Value)
            }
        case let array as [Any]:
            guard depth < limit else { throw .invalidValue(reason: "arrays and dictionaries nest more than \(limit) deep") }
            var items: [PropertyListValue] = []
            items.reserveCapacity(array.count)
            for item in array { items.append(try convert(item, depth: depth + 1, limit: limit)) }
            return .array(items)
        case let dictionary as [String: Any]:
            guard depth < limit else { throw .invalidValue(reason: "arrays and dictionaries nest more than \(limit) deep") }
            var entries: [String: PropertyListValue] = [:]
            for (key, value) in dictionary { entries[key] = try convert(value, depth: depth + 1, limit: limit) }
            return .dictionary(entries)
        case let url as URL:
            return .string(url.absoluteString)
        default:
            throw .invalidValue(reason: "\(type(of: object)) is not a property-list type")
        }
    }

    /// A `Float` as a property list stores it: the real its shortest decimal text spells
    /// (`Float(12.34)` is `12.34`, not `12.34000015258789`), as `<real>` in an XML property list.
    public static func real(float: Float) -> PropertyListValue {
        .real(Double(float.description) ?? Double(float))
    }

    /// The value as Foundation objects, as `PropertyListSerialization` writes them.
    public var foundationObject: Any {
        switch self {
        case .string(let text): text
        case .integer(let number): NSNumber(value: number)
        case .real(let number): NSNumber(value: number)
        case .boolean(let flag): flag
        case .data(let bytes): bytes
        case .date(let seconds): Date(timeIntervalSince1970: seconds)
        case .array(let items): items.map(\.foundationObject)
        case .dictionary(let entries): entries.mapValues(\.foundationObject)
        }
    }

    /// Reads a property-list file's contents, XML or binary (detected).
    /// - Throws: `PreferencesModelError.invalidValue` saying why the data is not one.
    public init(propertyListData data: Data) throws(PreferencesModelError) {
        let object: Any
        do {
            object = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            throw .invalidValue(reason: "not an XML or binary property list (\(error.localizedDescription))")
        }
        try self.init(foundation: object)
    }

    /// The value as an XML property list.
    /// - Throws: `PreferencesModelError.invalidValue` if Foundation cannot serialize it.
    public func xmlPropertyListData() throws(PreferencesModelError) -> Data {
        do {
            return try PropertyListSerialization.data(fromPropertyList: foundationObject, format: .xml, options: 0)
        } catch {
            throw .invalidValue(reason: "cannot write an XML property list: \(error.localizedDescription)")
        }
    }
}
