import Foundation

/// A property-list value: what a preference holds.
///
/// The eight cases are the property-list types of NSUserDefaults. A value keeps its type
/// through every layer (bus, store, client cache): an integer written is an integer read.
///
/// Equality and hashing are byte for byte (strings by their UTF-8 bytes, reals and dates by
/// their bit pattern), not Swift's synthesized ones: see `PropertyListValue+Equality.swift`.
public indirect enum PropertyListValue: Sendable, Hashable {
    /// A Unicode string.
    case string(String)
    /// A signed 64-bit integer.
    case integer(Int64)
    /// A double-precision real number.
    case real(Double)
    /// A boolean.
    case boolean(Bool)
    /// Raw bytes.
    case data(Data)
    /// A point in time, as seconds since 1970-01-01T00:00:00Z.
    case date(secondsSince1970: Double)
    /// An ordered list of values.
    case array([PropertyListValue])
    /// A dictionary with string keys.
    case dictionary([String: PropertyListValue])
}

extension PropertyListValue {
    /// The value as a Foundation `Date`, when it is a date.
    public var dateValue: Date? {
        if case .date(let seconds) = self { return Date(timeIntervalSince1970: seconds) }
        return nil
    }

    /// Makes a date value from a Foundation `Date`.
    public static func date(_ date: Date) -> PropertyListValue {
        .date(secondsSince1970: date.timeIntervalSince1970)
    }

    /// The name of the value's property-list type, as `defaults read-type` prints it
    /// (`string`, `integer`, `float`, `boolean`, `data`, `date`, `array`, `dictionary`).
    public var typeName: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .real: "float"
        case .boolean: "boolean"
        case .data: "data"
        case .date: "date"
        case .array: "array"
        case .dictionary: "dictionary"
        }
    }

    /// How deeply arrays and dictionaries nest in the value: 0 for a scalar, 1 for a flat
    /// array or dictionary.
    public var nestingDepth: Int {
        switch self {
        case .array(let items): 1 + (items.map(\.nestingDepth).max() ?? 0)
        case .dictionary(let items): 1 + (items.values.map(\.nestingDepth).max() ?? 0)
        default: 0
        }
    }
}
