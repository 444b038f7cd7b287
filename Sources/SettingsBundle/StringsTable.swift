import Foundation
import PreferencesModel

/// A localized strings table: the `"Title" = "Translation";` pairs of a `.strings` file
/// in a `<lang>.lproj` folder of the bundle.
public struct StringsTable: Sendable, Hashable {
    /// The translations, by the text the pane uses.
    public var entries: [String: String]

    /// A table with these translations.
    public init(entries: [String: String] = [:]) {
        self.entries = entries
    }

    /// The translation of `text`, or `text` itself when the table has none.
    public func localized(_ text: String) -> String {
        entries[text] ?? text
    }

    /// Parses a `.strings` file: old-style property-list dictionary entries without the
    /// outer braces, `/* comments */` allowed, in UTF-8 or UTF-16 (with a byte-order mark).
    /// - Throws: `SettingsBundleError.malformed` with the line of the problem.
    public static func parse(_ data: Data, path: String) throws(SettingsBundleError) -> StringsTable {
        guard let text = decode(data) else {
            throw .malformed(path: path, reason: "not UTF-8 or UTF-16 text")
        }
        let value: PropertyListValue
        do {
            // "{" added on the first line keeps the parser's line numbers those of the file.
            value = try OpenStepPropertyList.parse("{" + text + "\n}")
        } catch {
            throw .malformed(path: path, reason: "not a strings file (line \(error.line)): \(error.reason)")
        }
        guard case .dictionary(let pairs) = value else {
            throw .malformed(path: path, reason: "not a strings file: expected \"key\" = \"value\"; pairs")
        }
        var entries: [String: String] = [:]
        for (key, translation) in pairs {
            guard case .string(let string) = translation else {
                throw .malformed(path: path, reason: "the translation of \"\(key)\" is a \(translation.typeName), not a string")
            }
            entries[key] = string
        }
        return StringsTable(entries: entries)
    }

    private static func decode(_ data: Data) -> String? {
        if data.starts(with: [0xFF, 0xFE]) || data.starts(with: [0xFE, 0xFF]) {
            return String(data: data, encoding: .utf16)
        }
        let bytes = data.starts(with: [0xEF, 0xBB, 0xBF]) ? data.dropFirst(3) : data[...]
        return String(data: Data(bytes), encoding: .utf8)
    }
}

/// Which `<lang>.lproj` folders to look in, best first, for the user's languages.
public enum Localization {
    /// The folder names for `languages` (as `AppleLanguages` spells them: `pt-BR`, `de`):
    /// for each language its own spelling, the `_` spelling, and its base language; then
    /// `en` and `Base`, the usual development languages.
    public static func folders(for languages: [String]) -> [String] {
        var names: [String] = []
        func add(_ name: String) { if !name.isEmpty, !names.contains(name) { names.append(name) } }
        for language in languages {
            add(language)
            add(language.replacingOccurrences(of: "-", with: "_"))
            add(String(language.split(whereSeparator: { $0 == "-" || $0 == "_" }).first ?? ""))
        }
        add("en")
        add("Base")
        return names
    }

    /// The user's languages from the locale environment (`LANGUAGE`, `LC_ALL`,
    /// `LC_MESSAGES`, `LANG`), as the language domain derives them.
    public static func languages(environment: [String: String]) -> [String] {
        guard case .array(let items)? = LanguageDomain.make(environment: environment)["AppleLanguages"] else { return ["en"] }
        return items.compactMap { if case .string(let text) = $0 { text } else { nil } }
    }
}
