import Foundation

/// The old-style (OpenStep) property-list text format: what `defaults` prints and what
/// `-Key value` arguments and `prefs write` values are written in.
///
/// Parsing accepts quoted and unquoted strings, `( … )` arrays, `{ key = value; }`
/// dictionaries, `< hex >` data, `//` and `/* */` comments, and GNUstep's typed scalars
/// `<*I42>`, `<*R1.5>`, `<*BY>`/`<*BN>` and `<*D2001-01-01 00:00:00 +0000>`. Old-style text
/// has no numbers of its own: an unquoted `42` is the string "42", as on macOS.
public enum OpenStepPropertyList {
    /// Why text is not an old-style property list, with where it went wrong.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What was wrong.
        public let reason: String
        /// The 1-based line the problem is on.
        public let line: Int

        /// A sentence a person can act on.
        public var description: String { "not a property list (line \(line)): \(reason)" }
    }

    /// Parses `text` as one property-list value, nested at most `maximumNesting` deep.
    /// - Throws: `ParseError` saying what is wrong and where.
    public static func parse(_ text: String, maximumNesting: Int = 32) throws(ParseError) -> PropertyListValue {
        var parser = Parser(bytes: Array(text.utf8), maximumNesting: maximumNesting)
        let value = try parser.parseValue(depth: 0)
        try parser.skipTrivia()
        guard parser.atEnd else { throw parser.error("unexpected text after the value") }
        return value
    }

    /// Old-style text for `value`, indented like `defaults read` prints it.
    ///
    /// Integers, reals and booleans print as bare numbers (`1`/`0` for booleans), dates as
    /// quoted `yyyy-MM-dd HH:mm:ss +0000` strings, data as `{length = N, bytes = 0x…}`
    /// in the manner of macOS: that text is for reading, not for parsing back with types.
    public static func describe(_ value: PropertyListValue, indent: Int = 0) -> String {
        let pad = String(repeating: "    ", count: indent)
        switch value {
        case .string(let text): return quoteIfNeeded(text)
        case .integer(let number): return String(number)
        case .real(let number): return ValueText.formatReal(number)
        case .boolean(let flag): return flag ? "1" : "0"
        case .data(let bytes): return "{length = \(bytes.count), bytes = 0x\(bytes.map { String(format: "%02x", $0) }.joined())}"
        case .date(let seconds): return "\"\(ValueText.formatDate(seconds))\""
        case .array(let items):
            if items.isEmpty { return "(\n\(pad))" }
            let inner = items.map { "\(pad)    \(describe($0, indent: indent + 1))" }.joined(separator: ",\n")
            return "(\n\(inner)\n\(pad))"
        case .dictionary(let entries):
            if entries.isEmpty { return "{\n\(pad)}" }
            let inner = entries.sorted { $0.key < $1.key }.map {
                "\(pad)    \(quoteIfNeeded($0.key)) = \(describe($0.value, indent: indent + 1));"
            }.joined(separator: "\n")
            return "{\n\(inner)\n\(pad)}"
        }
    }

    /// A string as old-style text: bare when it is made only of letters, digits, `_` and
    /// `$` (as macOS prints it), quoted and escaped otherwise.
    public static func quoteIfNeeded(_ text: String) -> String {
        if !text.isEmpty, text.utf8.allSatisfy(isBareCharacter) { return text }
        return quote(text)
    }

    /// A string as old-style text, always quoted and escaped.
    public static func quote(_ text: String) -> String {
        var quoted = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\t": quoted += "\\t"
            case "\r": quoted += "\\r"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7f {
                    quoted += String(format: "\\U%04x", scalar.value)
                } else {
                    quoted.unicodeScalars.append(scalar)
                }
            }
        }
        return quoted + "\""
    }

    private static func isBareCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "$"):
            true
        default:
            false
        }
    }
}
