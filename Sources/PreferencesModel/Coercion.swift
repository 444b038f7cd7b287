import Foundation

/// How the typed getters of a preferences object turn a stored value into the type asked
/// for. One rule per cell, written down here and tested row by row.
///
/// | stored ↓ / asked → | bool | integer | double | string | array, dictionary, data |
/// | --- | --- | --- | --- | --- | --- |
/// | boolean | itself | 1 / 0 | 1.0 / 0.0 | "1" / "0" | nil |
/// | integer | ≠ 0 | itself | exact value | decimal text | nil |
/// | real | ≠ 0 | truncated toward zero (0 if not finite or out of range) | itself | shortest text that reads back | nil |
/// | string | true for "YES", "true", "1" and numbers ≠ 0, any case, surrounding white space ignored; false otherwise | the number it spells (a real is truncated), 0 if it spells none | the number it spells, 0 if none | itself | nil |
/// | date, data, array, dictionary | false | 0 | 0 | nil | the same type only |
///
/// Where Apple's documents disagree (NSString's `boolValue` takes any string starting with
/// `Y`, `T` or a non-zero digit, the old Java API only "YES"), prefsd follows the rule in
/// the table: "YES", "true" or a number, so "yellow" is false.
public enum Coercion {
    /// The value as a boolean, or `nil` when it does not convert (the getter then answers false).
    public static func bool(_ value: PropertyListValue) -> Bool? {
        switch value {
        case .boolean(let flag): return flag
        case .integer(let number): return number != 0
        case .real(let number): return number != 0
        case .string(let text):
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
            if trimmed == "yes" || trimmed == "true" { return true }
            if trimmed == "no" || trimmed == "false" { return false }
            if let number = Double(trimmed) { return number != 0 }
            return false
        default: return nil
        }
    }

    /// The value as an integer, or `nil` when it does not convert (the getter then answers 0).
    public static func integer(_ value: PropertyListValue) -> Int? {
        switch value {
        case .integer(let number): return Int(exactly: number) ?? 0
        case .real(let number): return truncating(number)
        case .boolean(let flag): return flag ? 1 : 0
        case .string(let text):
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if let number = Int(trimmed) { return number }
            if let number = Double(trimmed) { return truncating(number) }
            return nil
        default: return nil
        }
    }

    /// The value as a double, or `nil` when it does not convert (the getter then answers 0).
    public static func double(_ value: PropertyListValue) -> Double? {
        switch value {
        case .real(let number): return number
        case .integer(let number): return Double(number)
        case .boolean(let flag): return flag ? 1 : 0
        case .string(let text): return Double(text.trimmingCharacters(in: .whitespacesAndNewlines))
        default: return nil
        }
    }

    /// The value as a string, or `nil` when it is not a string or a number.
    public static func string(_ value: PropertyListValue) -> String? {
        switch value {
        case .string(let text): return text
        case .integer(let number): return String(number)
        case .real(let number): return ValueText.formatReal(number)
        case .boolean(let flag): return flag ? "1" : "0"
        default: return nil
        }
    }

    /// The value as an array of strings, when it is an array holding only strings.
    public static func stringArray(_ value: PropertyListValue) -> [String]? {
        guard case .array(let items) = value else { return nil }
        var strings: [String] = []
        strings.reserveCapacity(items.count)
        for item in items {
            guard case .string(let text) = item else { return nil }
            strings.append(text)
        }
        return strings
    }

    /// The value as a URL: a string with a scheme is that URL, any other string a file path
    /// (`~` expanded).
    public static func url(_ value: PropertyListValue) -> URL? {
        guard case .string(let text) = value, !text.isEmpty else { return nil }
        if let url = URL(string: text), let scheme = url.scheme, !scheme.isEmpty, text.contains(":") {
            return url
        }
        return URL(fileURLWithPath: (text as NSString).expandingTildeInPath)
    }

    private static func truncating(_ number: Double) -> Int {
        guard number.isFinite, let value = Int(exactly: number.rounded(.towardZero)) else { return 0 }
        return value
    }
}
