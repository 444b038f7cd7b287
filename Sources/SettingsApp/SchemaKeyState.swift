import GSettingsSchemas
import PreferencesModel

/// One key of a schema at its path as the window sees it: where prefsd holds it, the
/// value prefsd reads (if any), the administrator's default, whether the user has a value
/// of their own that GSettings reads, and whether it is locked.
struct SchemaKeyState {
    let key: SchemaKey
    /// The prefsd key (`interface/gtk-theme`), `nil` when the path rule cannot map it.
    let prefsdKey: String?
    /// What prefsd reads: the user's value, else the administrator's default.
    let stored: PropertyListValue?
    /// The user's own value (not an administrator's default, not a forced value).
    let own: PropertyListValue?
    /// The administrator's default, when GSettings reads it (and the key is not locked).
    let administratorDefault: PropertyListValue?
    let locked: Bool

    init(_ key: SchemaKey, in instance: SchemaInstance, controller: SettingsController) {
        self.key = key
        let prefsdKey = instance.prefsdKey(key.name)
        self.prefsdKey = prefsdKey
        stored = prefsdKey.flatMap { controller.values(in: instance.domain)[$0] }
        own = prefsdKey.flatMap { controller.ownValue(instance.domain, $0) }
        locked = prefsdKey.map { controller.isForced(instance.domain, $0) } ?? false
        let administrator = prefsdKey.flatMap { controller.administratorDefault(instance.domain, $0) }
        administratorDefault = !locked && key.reads(administrator) ? administrator : nil
    }

    /// Whether the user has a value of their own that GSettings reads (not a default).
    var isSet: Bool { key.reads(own) }

    /// Whether the key reads the administrator's default (the user has no value of their own).
    var readsAdministratorDefault: Bool { administratorDefault != nil && !isSet && !locked }

    /// The default a reset goes back to: the administrator's, else the schema's.
    var defaultText: String { administratorDefault.map { key.text($0) } ?? key.defaultText }

    /// The name to show: the summary, else the key's name.
    var label: String { key.summary ?? key.name }

    /// One line for the key list: the value, then whether it is the default or what the default is.
    var summaryLine: String {
        let value = Self.oneLine(key.text(stored))
        let defaultText = Self.oneLine(self.defaultText) + (administratorDefault == nil ? "" : " set by your administrator")
        var line =
            isSet || locked
            ? "\(key.name) = \(value) · default \(defaultText)"
            : readsAdministratorDefault
                ? "\(key.name) = \(value) (default set by your administrator)"
                : "\(key.name) = \(value) (default)"
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
