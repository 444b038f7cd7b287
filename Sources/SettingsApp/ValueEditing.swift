import Foundation
import PreferencesModel

/// The raw editor's text forms of values: what a key's field shows, and how typed text
/// becomes a value of a chosen type (the forms `prefs write` takes, parsed by ``ValueText/parseTyped(_:as:)``).
enum ValueEditing {
    /// The types a new key can have, in the order the "Type" list shows them.
    static let typeNames = ["string", "integer", "float", "boolean", "date", "data", "array", "dictionary"]

    /// The text a value is edited as: strings as they are, numbers and dates in the
    /// forms `prefs write` reads, booleans `true`/`false`, data as hex digits, arrays and
    /// dictionaries as old-style property-list text.
    static func text(_ value: PropertyListValue) -> String {
        switch value {
        case .string(let text): text
        case .integer(let number): String(number)
        case .real(let number): ValueText.formatReal(number)
        case .boolean(let flag): flag ? "true" : "false"
        case .date(let seconds): ValueText.formatDate(seconds)
        case .data(let bytes): bytes.map { String(format: "%02x", $0) }.joined()
        case .array, .dictionary:
            // On one line, as an entry row shows it.
            OpenStepPropertyList.describe(value).split(separator: "\n")
                .map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        }
    }

    /// Parses `text` as a value of the type named `typeName` (one of ``typeNames``).
    /// - Throws: a message saying what text the type takes.
    static func parse(_ text: String, as typeName: String) throws(EditError) -> PropertyListValue {
        let types: [String: ValueText.ScalarType] = [
            "string": .string, "integer": .integer, "float": .real, "boolean": .boolean, "date": .date, "data": .data,
        ]
        if let type = types[typeName] {
            guard let value = ValueText.parseTyped(text, as: type) else {
                throw EditError(message: "\("aeiou".contains(typeName.prefix(1)) ? "an" : "a") \(typeName) needs \(type.expected), not \"\(text)\"")
            }
            return value
        }
        let value: PropertyListValue
        do throws(OpenStepPropertyList.ParseError) {
            value = try OpenStepPropertyList.parse(text)
        } catch {
            throw EditError(
                message:
                    "an \(typeName) is written as old-style property-list text, like \(typeName == "array" ? "(a, b)" : "{ key = value; }"): \(error.description)"
            )
        }
        guard value.typeName == typeName else {
            throw EditError(message: "the text is a \(value.typeName), not an \(typeName); write \(typeName == "array" ? "(a, b)" : "{ key = value; }")")
        }
        return value
    }
}

/// Why typed text is not a value of the type asked for.
struct EditError: Error {
    /// A sentence saying what to type.
    var message: String
}
