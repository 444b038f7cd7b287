import GSettingsSchemas
import PreferencesModel

/// One key of a schema at its path as the window sees it: where prefsd holds it, the
/// stored value (if any), whether GSettings reads that value, and whether it is locked.
struct SchemaKeyState {
    let key: SchemaKey
    /// The prefsd key (`interface/gtk-theme`), `nil` when the path rule cannot map it.
    let prefsdKey: String?
    let stored: PropertyListValue?
    let locked: Bool

    init(_ key: SchemaKey, in instance: SchemaInstance, controller: SettingsController) {
        self.key = key
        prefsdKey = instance.prefsdKey(key.name)
        stored = prefsdKey.flatMap { controller.values(in: instance.domain)[$0] }
        locked = prefsdKey.map { controller.isForced(instance.domain, $0) } ?? false
    }

    /// Whether the user has a value of their own that GSettings reads (not the default).
    var isSet: Bool { key.reads(stored) }

    /// The name to show: the summary, else the key's name.
    var label: String { key.summary ?? key.name }

    /// One line for the key list: the value, then whether it is the default or what the default is.
    var summaryLine: String {
        let value = Self.oneLine(key.text(stored))
        var line = isSet ? "\(key.name) = \(value) · default \(Self.oneLine(key.defaultText))" : "\(key.name) = \(value) (default)"
        if locked { line += " · locked by your administrator" }
        return line
    }

    /// Listed text on one line, for a subtitle.
    static func oneLine(_ text: String) -> String {
        let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        guard lines.count > 1 else { return text }
        return lines.joined(separator: " ").replacingOccurrences(of: "[ ", with: "[").replacingOccurrences(of: " ]", with: "]")
            .replacingOccurrences(of: "{ ", with: "{").replacingOccurrences(of: " }", with: "}")
    }
}
