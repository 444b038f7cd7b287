import DBus
import Foundation
import PreferencesModel

/// The deepest nesting of arrays and dictionaries a value may have on the bus.
public let maximumValueNesting = 32

extension PropertyListValue {
    /// The value as the service sends it inside a variant: `s`, `x`, `d`, `b`, `ay`, `(d)`,
    /// `av` or `a{sv}` (dictionary entries sorted by key).
    public var dbusValue: DBusValue {
        switch self {
        case .string(let text): .string(text)
        case .integer(let number): .int64(number)
        case .real(let number): .double(number)
        case .boolean(let flag): .boolean(flag)
        case .data(let bytes): .bytes([UInt8](bytes))
        case .date(let seconds): .structure([.double(seconds)])
        case .array(let items):
            .array(element: .variant, items.map { .variant($0.dbusValue) })
        case .dictionary(let entries):
            .array(
                element: .stringVariantEntry,
                entries.sorted { $0.key < $1.key }.map { .dictEntry(.string($0.key), .variant($0.value.dbusValue)) }
            )
        }
    }

    /// The value wrapped in a variant, as a `v` argument or `a{sv}` entry carries it.
    public var dbusVariant: DBusValue { .variant(dbusValue) }

    /// The bytes the value takes marshalled as a `v` argument at offset 0: what the value
    /// quota measures.
    ///
    /// Scalars are counted directly (prefsd counts every value of the store at start-up, so
    /// this spares building 100,000 `DBusValue`s); arrays and dictionaries are marshalled
    /// in thought through ``DBusValue/marshalledSize``. The variant's signature comes first
    /// (length byte, text, NUL), then the value at its alignment.
    public var marshalledSize: Int {
        switch self {
        case .string(let text): 4 + 4 + text.utf8.count + 1  // "s" → 3 bytes, padded to 4; length; text; NUL
        case .integer, .real: 8 + 8  // "x" / "d" → 3 bytes, padded to 8
        case .boolean: 4 + 4  // "b" → 3 bytes, padded to 4
        case .data(let bytes): 4 + 4 + bytes.count  // "ay" → 4 bytes; length; bytes
        case .date: 8 + 8  // "(d)" → 5 bytes, padded to 8
        case .array, .dictionary: dbusVariant.marshalledSize
        }
    }

    /// Maps a value received from the bus to a property-list value.
    ///
    /// Accepts what the contract accepts on input: the integers `y n q i u t x`, `d`, `b`,
    /// `s`, `ay`, `(d)` dates, any array whose elements map, and any `a{sT}` whose values
    /// map. Variants are unwrapped, also a variant directly inside a variant. A dictionary
    /// that names one key twice, byte for byte or in two Unicode normalisations of it, is
    /// refused: it could not be stored and read back as written.
    /// - Parameter maximumNesting: the deepest nesting of arrays and dictionaries allowed.
    /// - Throws: `PreferencesModelError.invalidValue` naming what was wrong.
    public init(dbus value: DBusValue, maximumNesting: Int = maximumValueNesting) throws(PreferencesModelError) {
        self = try Self.map(value, depth: 0, limit: maximumNesting)
    }

    /// Maps an `a{sv}` (or any `a{sT}`) argument to a dictionary of property-list values.
    /// - Throws: `PreferencesModelError.invalidValue` naming what was wrong.
    public static func dictionary(dbus value: DBusValue, maximumNesting: Int = maximumValueNesting) throws(PreferencesModelError) -> [String: PropertyListValue]
    {
        // One level more for the dictionary itself; saturating, so `Int.max` means no limit.
        let (limit, overflow) = maximumNesting.addingReportingOverflow(1)
        guard case .dictionary(let entries) = try map(value, depth: 0, limit: overflow ? .max : limit) else {
            throw .invalidValue(reason: "expected a dictionary with string keys, got \(value.signature)")
        }
        return entries
    }

    /// Why a dictionary inside a value that names one key twice is refused: a dictionary
    /// holds each key once, telling keys apart by Unicode canonical equivalence, so the
    /// second would replace the first and the value could not be read back as written.
    private static func repeatedKey(_ key: String, _ earlier: String) -> String {
        let shown = "\"\(key.prefix(80))\""
        if PropertyListValue.string(key) == .string(earlier) {
            return "a dictionary in the value names the key \(shown) twice; name each key once"
        }
        return
            "a dictionary in the value has two keys, \(shown) and \"\(earlier.prefix(80))\", that differ only in their Unicode normalisation (\(Self.scalars(key)) and \(Self.scalars(earlier))); a dictionary holds one of them: use one spelling"
    }

    /// The Unicode scalars of a short text, as `U+0065 U+0301`, or its length past 8.
    private static func scalars(_ text: String) -> String {
        let scalars = Array(text.unicodeScalars)
        guard scalars.count <= 8 else { return "\(scalars.count) code points" }
        return scalars.map { "U+" + String($0.value, radix: 16, uppercase: true).leftPadded(to: 4) }.joined(separator: " ")
    }

    private static func map(_ value: DBusValue, depth: Int, limit: Int) throws(PreferencesModelError) -> PropertyListValue {
        switch value {
        case .variant(let inner): return try map(inner, depth: depth, limit: limit)
        case .string(let text): return .string(text)
        case .boolean(let flag): return .boolean(flag)
        case .double(let number): return .real(number)
        case .byte(let number): return .integer(Int64(number))
        case .int16(let number): return .integer(Int64(number))
        case .uint16(let number): return .integer(Int64(number))
        case .int32(let number): return .integer(Int64(number))
        case .uint32(let number): return .integer(Int64(number))
        case .int64(let number): return .integer(number)
        case .uint64(let number):
            guard let exact = Int64(exactly: number) else {
                throw .invalidValue(reason: "the unsigned integer \(number) is above the largest integer a preference holds (\(Int64.max))")
            }
            return .integer(exact)
        case .bytes(let bytes): return .data(Data(bytes))
        case .structure(let fields):
            guard fields.count == 1, case .double(let seconds) = fields[0] else {
                throw .invalidValue(reason: "the struct \(value.signature) is not a date; a date is the one-field struct (d) of seconds since 1970")
            }
            guard seconds.isFinite else { throw .invalidValue(reason: "a date must be a finite number of seconds") }
            return .date(secondsSince1970: seconds)
        case .array(let element, let items):
            guard depth < limit else {
                throw .invalidValue(reason: "arrays and dictionaries nest more than \(limit) deep")
            }
            if element.rawValue.hasPrefix("{") {
                var entries: [String: PropertyListValue] = [:]
                entries.reserveCapacity(items.count)
                for item in items {
                    guard case .dictEntry(let key, let entryValue) = item, case .string(let name) = key else {
                        throw .invalidValue(reason: "dictionary keys must be strings, not \(element)")
                    }
                    if let index = entries.index(forKey: name) {
                        throw .invalidValue(reason: Self.repeatedKey(name, entries[index].key))
                    }
                    entries[name] = try map(entryValue, depth: depth + 1, limit: limit)
                }
                return .dictionary(entries)
            }
            if element.rawValue == "y" {
                var bytes = [UInt8]()
                bytes.reserveCapacity(items.count)
                for case .byte(let byte) in items { bytes.append(byte) }
                return .data(Data(bytes))
            }
            var mapped = [PropertyListValue]()
            mapped.reserveCapacity(items.count)
            for item in items { mapped.append(try map(item, depth: depth + 1, limit: limit)) }
            return .array(mapped)
        case .objectPath(let path):
            throw .invalidValue(reason: "an object path (\(path)) is not a property-list value")
        case .signature:
            throw .invalidValue(reason: "a type signature is not a property-list value")
        case .unixFD:
            throw .invalidValue(reason: "a file descriptor is not a property-list value")
        case .dictEntry:
            throw .invalidValue(reason: "a dictionary entry outside a dictionary is not a property-list value")
        }
    }
}

extension String {
    /// The text with `0` in front up to `width` characters.
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
