import Foundation
import PreferencesModel

/// How `prefs` prints values: old-style text as macOS `defaults` prints it, JSON, and one
/// line per value for `monitor`.
public enum OutputFormatter {
    /// A value as `defaults read DOMAIN KEY` prints it: strings and dates bare, numbers as
    /// digits, booleans as 1 or 0, arrays and dictionaries as indented old-style text.
    public static func text(_ value: PropertyListValue) -> String {
        switch value {
        case .string(let text): text
        case .date(let seconds): ValueText.formatDate(seconds)
        default: OpenStepPropertyList.describe(value)
        }
    }

    /// A value as JSON, indented, keys sorted. Dates become ISO 8601 strings, data becomes
    /// base64 strings, booleans `true`/`false`, reals keep a decimal point; a real that is
    /// not finite (JSON has no such number) becomes `null`.
    public static func json(_ value: PropertyListValue, indent: Int = 0) -> String {
        let pad = String(repeating: "  ", count: indent)
        switch value {
        case .string(let text): return jsonString(text)
        case .integer(let number): return String(number)
        case .real(let number):
            guard number.isFinite else { return "null" }
            return "\(number)"
        case .boolean(let flag): return flag ? "true" : "false"
        case .data(let bytes): return jsonString(bytes.base64EncodedString())
        case .date(let seconds): return jsonString(ValueText.iso8601(seconds))
        case .array(let items):
            if items.isEmpty { return "[]" }
            let inner = items.map { "\(pad)  \(json($0, indent: indent + 1))" }.joined(separator: ",\n")
            return "[\n\(inner)\n\(pad)]"
        case .dictionary(let entries):
            if entries.isEmpty { return "{}" }
            let inner = entries.sorted { $0.key < $1.key }.map {
                "\(pad)  \(jsonString($0.key)): \(json($0.value, indent: indent + 1))"
            }.joined(separator: ",\n")
            return "{\n\(inner)\n\(pad)}"
        }
    }

    /// A value as compact JSON on one line (for `monitor --json`).
    public static func compactJSON(_ value: PropertyListValue) -> String {
        switch value {
        case .array(let items): "[" + items.map(compactJSON).joined(separator: ",") + "]"
        case .dictionary(let entries):
            "{" + entries.sorted { $0.key < $1.key }.map { jsonString($0.key) + ":" + compactJSON($0.value) }.joined(separator: ",") + "}"
        default: json(value)
        }
    }

    /// `text` as a JSON string literal.
    public static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7f || scalar.value == 0x2028 || scalar.value == 0x2029 {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    /// A value as old-style text on one line (``ValueText/compact(_:)``).
    public static func compact(_ value: PropertyListValue) -> String { ValueText.compact(value) }

    /// The line `prefs monitor` prints for one `Changed` signal:
    /// `DOMAIN: KEY = VALUE; KEY2 = VALUE2; removed OLD, OTHER`; for a volatile domain's
    /// (`VolatileChanged`), `DOMAIN (volatile): …`.
    public static func changeLine(domain: String, changed: [String: PropertyListValue], removed: [String], volatile: Bool = false) -> String {
        var parts = changed.sorted { $0.key < $1.key }.map { "\(OpenStepPropertyList.quoteIfNeeded($0.key)) = \(compact($0.value))" }
        if !removed.isEmpty {
            parts.append("removed " + removed.sorted().map(OpenStepPropertyList.quoteIfNeeded).joined(separator: ", "))
        }
        return PrefsError.oneLine("\(domain)\(volatile ? " (volatile)" : ""): " + parts.joined(separator: "; "))
    }

    /// The JSON line `prefs monitor --json` prints for one `Changed` signal; a volatile
    /// domain's (`VolatileChanged`) also has `"volatile":true`.
    public static func changeJSON(domain: String, changed: [String: PropertyListValue], removed: [String], volatile: Bool = false) -> String {
        "{\"domain\":\(jsonString(domain)),\(volatile ? "\"volatile\":true," : "")\"changed\":\(compactJSON(.dictionary(changed))),\"removed\":\(compactJSON(.array(removed.sorted().map(PropertyListValue.string))))}"
    }
}
