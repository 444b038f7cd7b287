import Foundation

extension ValueText {
    /// The scalar types a value can be typed in as text: what `prefs write -int 3` and the
    /// settings app's "Type" list choose between.
    public enum ScalarType: String, Sendable, CaseIterable {
        /// Any text, as it is.
        case string
        /// A whole number in 64 bits, optionally signed (`-14`, `+7`).
        case integer
        /// A finite real number (`1.5`, `-2e3`).
        case real
        /// `true`, `false`, `yes`, `no`, `1` or `0`, in any case.
        case boolean
        /// A date in one of the forms of ``ValueText/parseDate(_:)``.
        case date
        /// Hexadecimal digits as ``ValueText/parseHex(_:)`` reads them, optionally framed as
        /// `<…>` or after `0x`.
        case data

        /// What text this type takes, for a message: "a whole number between … and …".
        public var expected: String {
            switch self {
            case .string: "any text"
            case .integer: "a whole number between \(Int64.min) and \(Int64.max)"
            case .real: "a finite number like 1.5 or -2e3"
            case .boolean: "true, false, yes, no, 1 or 0"
            case .date: "a date like \"2024-05-01 12:00:00 +0000\", \"2024-05-01T12:00:00Z\" or \"2024-05-01\""
            case .data: "an even number of hex digits like 0aff (spaces and <> allowed)"
            }
        }
    }

    /// The value that `text` stands for as a value of `type`, or `nil` when it is not one
    /// (``ScalarType/expected`` says what it takes).
    public static func parseTyped(_ text: String, as type: ScalarType) -> PropertyListValue? {
        switch type {
        case .string:
            return .string(text)
        case .integer:
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            return Int64(trimmed.hasPrefix("+") ? String(trimmed.dropFirst()) : trimmed).map(PropertyListValue.integer)
        case .real:
            guard let number = Double(text.trimmingCharacters(in: .whitespaces)), number.isFinite else { return nil }
            return .real(number)
        case .boolean:
            switch text.lowercased() {
            case "true", "yes", "1": return .boolean(true)
            case "false", "no", "0": return .boolean(false)
            default: return nil
            }
        case .date:
            return parseDate(text).map { .date(secondsSince1970: $0) }
        case .data:
            var digits = Substring(text.trimmingCharacters(in: .whitespaces))
            if digits.hasPrefix("<"), digits.hasSuffix(">") { digits = digits.dropFirst().dropLast() }
            if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
            return parseHex(digits).map(PropertyListValue.data)
        }
    }

    /// A value as old-style text on one line: `(a, b)`, `{ k = v; }`, strings and dates
    /// always quoted (so `"16"` reads apart from `16`, and both sides of a change alike),
    /// booleans as `true` and `false` (not old-style text's 1 and 0, which read as integers
    /// beside the integers of a history) — how `prefs history` and `prefs monitor`, the
    /// settings app's History page and a value's `description` show it.
    public static func compact(_ value: PropertyListValue) -> String {
        switch value {
        case .string(let text): OpenStepPropertyList.quote(text)
        case .boolean(let flag): flag ? "true" : "false"
        case .array(let items): "(" + items.map(compact).joined(separator: ", ") + ")"
        case .dictionary(let entries):
            entries.isEmpty
                ? "{ }"
                : "{ " + entries.sorted { $0.key < $1.key }.map { "\(OpenStepPropertyList.quoteIfNeeded($0.key)) = \(compact($0.value)); " }.joined() + "}"
        default: OpenStepPropertyList.describe(value)
        }
    }
}
