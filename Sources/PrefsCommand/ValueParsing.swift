import Foundation
import PreferencesModel

/// What the arguments after `prefs write DOMAIN` ask for.
public enum WriteRequest: Sendable, Equatable {
    /// Replace the whole domain with this dictionary (`prefs write DOMAIN '{ … }'`).
    case replaceDomain([String: PropertyListValue])
    /// Set `key` to `value`.
    case set(key: String, value: PropertyListValue)
    /// Append `items` to the array at `key` (`-array-add`).
    case arrayAdd(key: String, items: [PropertyListValue])
    /// Merge `entries` into the dictionary at `key` (`-dict-add`).
    case dictAdd(key: String, entries: [String: PropertyListValue])

    /// The key written, or `nil` when the whole domain is.
    public var key: String? {
        switch self {
        case .replaceDomain: nil
        case .set(let key, _), .arrayAdd(let key, _), .dictAdd(let key, _): key
        }
    }
}

/// Parses the `defaults`-style value arguments of `prefs write`.
///
/// A plain VALUE is old-style property-list text (`'(a, b)'`, `'{ k = v; }'`, `<0aff>`);
/// text that does not parse as one is taken as a plain string. The type flags are
/// `-string`, `-int`/`-integer`, `-float`, `-bool`/`-boolean` (true/false/yes/no/1/0),
/// `-date` (the forms of ``ValueText/parseDate(_:)``), `-data` (hex, as
/// ``ValueText/parseHex(_:)`` reads it, optionally as `<…>` or after `0x`),
/// `-array …`, `-array-add …`, `-dict key value …` and `-dict-add key value …`. Inside
/// arrays and dictionaries each item is a plain value or a scalar type flag and its value.
public enum ValueParser {
    /// The scalar type flags, as they are written on the command line.
    public static var scalarFlags: Set<String> { Set(flagTypes.keys) }

    /// Parses everything after `prefs write DOMAIN`.
    /// - Throws: ``PrefsError/usage(_:)`` saying what is wrong.
    public static func parseWrite(_ arguments: [String]) throws(PrefsError) -> WriteRequest {
        guard let first = arguments.first else {
            throw .usage("give a key and a value, or a whole domain as '{ key = value; }'")
        }
        if arguments.count == 1 {
            guard case .dictionary(let entries) = try? OpenStepPropertyList.parse(first) else {
                throw .usage("\"\(first)\" is neither a key followed by a value nor a dictionary '{ key = value; }' to replace the domain with")
            }
            return .replaceDomain(entries)
        }
        let key = first
        let rest = Array(arguments.dropFirst())
        switch rest[0] {
        case "-array":
            return .set(key: key, value: .array(try parseItems(Array(rest.dropFirst()))))
        case "-array-add":
            let items = try parseItems(Array(rest.dropFirst()))
            guard !items.isEmpty else { throw .usage("-array-add needs at least one value to add") }
            return .arrayAdd(key: key, items: items)
        case "-dict":
            return .set(key: key, value: .dictionary(try parseEntries(Array(rest.dropFirst()), flag: "-dict")))
        case "-dict-add":
            let entries = try parseEntries(Array(rest.dropFirst()), flag: "-dict-add")
            guard !entries.isEmpty else { throw .usage("-dict-add needs at least one key and value to add") }
            return .dictAdd(key: key, entries: entries)
        default:
            var position = 0
            let value = try parseItem(rest, at: &position)
            guard position == rest.count else {
                throw .usage("unexpected \"\(rest[position])\" after the value; quote a value that has spaces, or use -array for several values")
            }
            return .set(key: key, value: value)
        }
    }

    /// Parses a list of items: plain values or scalar type flags with their values.
    public static func parseItems(_ arguments: [String]) throws(PrefsError) -> [PropertyListValue] {
        var items: [PropertyListValue] = []
        var position = 0
        while position < arguments.count {
            items.append(try parseItem(arguments, at: &position))
        }
        return items
    }

    /// Parses `key value key value …` where each value is a plain value or a scalar type
    /// flag with its value.
    static func parseEntries(_ arguments: [String], flag: String) throws(PrefsError) -> [String: PropertyListValue] {
        var entries: [String: PropertyListValue] = [:]
        var position = 0
        while position < arguments.count {
            let key = arguments[position]
            position += 1
            guard position < arguments.count else {
                throw .usage("\(flag) takes pairs of key and value; \"\(key)\" has no value")
            }
            entries[key] = try parseItem(arguments, at: &position)
        }
        return entries
    }

    /// Parses one item at `position` (a type flag and its value, or a plain value) and
    /// moves `position` past it.
    static func parseItem(_ arguments: [String], at position: inout Int) throws(PrefsError) -> PropertyListValue {
        let word = arguments[position]
        position += 1
        if word == "-array" || word == "-array-add" || word == "-dict" || word == "-dict-add" {
            throw .usage("\(word) must come right after the key and cannot be nested; write nested values as property-list text like '(a, (b, c))'")
        }
        guard flagTypes[word] != nil else { return parsePlain(word) }
        guard position < arguments.count else { throw .usage("\(word) needs a value after it") }
        let text = arguments[position]
        position += 1
        return try parseTyped(flag: word, text)
    }

    /// A plain value: old-style property-list text, or the text itself as a string.
    public static func parsePlain(_ text: String) -> PropertyListValue {
        (try? OpenStepPropertyList.parse(text)) ?? .string(text)
    }

    /// The value type each scalar type flag stands for.
    static let flagTypes: [String: ValueText.ScalarType] = [
        "-string": .string, "-int": .integer, "-integer": .integer, "-float": .real,
        "-bool": .boolean, "-boolean": .boolean, "-date": .date, "-data": .data,
    ]

    /// The value of one scalar type flag, parsed by ``ValueText/parseTyped(_:as:)``.
    /// - Throws: ``PrefsError/usage(_:)`` when the text is not a value of that type.
    public static func parseTyped(flag: String, _ text: String) throws(PrefsError) -> PropertyListValue {
        guard let type = flagTypes[flag] else { throw .usage("unknown type flag \(flag)") }
        guard let value = ValueText.parseTyped(text, as: type) else {
            throw .usage("\(flag) needs \(type.expected), not \"\(text)\"")
        }
        return value
    }
}
