import GSettingsSchemas
import Gtk
import PreferencesModel

/// The editor of a schema key, chosen by its type: an enum's nicks as radio buttons, a
/// flags key's nicks as check boxes, a boolean as a switch, a number (bounded by its
/// range, if any) or a string in a text field, anything else as GVariant text over several
/// lines (an array or dictionary one item per line). Every value is checked against the
/// key's type and range (``SchemaKey/value(parsing:)``) before it is written.
class SchemaKeyEditor {
    let key: SchemaKey
    /// Called with a checked value the user chose.
    var onChoose: (PropertyListValue) -> Void = { _ in }
    /// Called when the user's text is refused, with why.
    var onRefuse: (SchemaError) -> Void = { _ in }
    /// True while the editor itself sets its widgets, so that is not taken for the user.
    var updating = false
    /// The widgets to make insensitive when the key is locked.
    var controls: [Widget] = []

    init(key: SchemaKey) {
        self.key = key
    }

    /// The editor for `key`, its rows added to `group`.
    static func make(for key: SchemaKey, group: PreferencesGroup) -> SchemaKeyEditor {
        switch key.choices {
        case .enumeration(let nicks): return ChoiceEditor(key: key, nicks: nicks, group: group)
        case .flags(let nicks): return FlagsEditor(key: key, nicks: nicks, group: group)
        case .range: return TextFieldEditor(key: key, group: group, kind: .number)
        case .any:
            switch key.type {
            case "b": return SwitchEditor(key: key, group: group)
            case "y", "n", "q", "i", "u", "x", "t", "d": return TextFieldEditor(key: key, group: group, kind: .number)
            case "s": return TextFieldEditor(key: key, group: group, kind: .string)
            default: return GVariantEditor(key: key, group: group)
            }
        }
    }

    /// What the editor's group says about what to enter.
    static func hint(for key: SchemaKey) -> String {
        switch key.choices {
        case .enumeration: return "Choose one; it is saved at once."
        case .flags: return "Choose any; they are saved at once."
        case .range(_, _, let low, let high): return "A number from \(low) to \(high); press Enter or Apply to save it."
        case .any:
            switch key.type {
            case "b": return ""
            case "y", "n", "q", "i", "u", "x", "t", "d": return "A number; press Enter or Apply to save it."
            case "s": return "Text; press Enter or Apply to save it."
            default: return "GVariant text of type \(key.type), as gsettings set takes it; a list one item per line. Apply saves it."
            }
        }
    }

    /// Shows the value GSettings reads for `stored`.
    func show(_ stored: PropertyListValue?) {}

    /// Makes the editor editable or not (locked, with the reason for screen readers).
    func setEditable(_ editable: Bool, reason: String?) {
        for control in controls {
            control.isSensitive = editable
            if let reason { control.setAccessibleDescription(reason) }
        }
    }

    /// Checks `text` as the key's value and, when it passes, hands it on.
    func submit(_ parse: () throws(SchemaError) -> PropertyListValue) {
        do throws(SchemaError) {
            onChoose(try parse())
        } catch {
            onRefuse(error)
        }
    }
}

/// An enum: its nicks as a column of toggle buttons, one pressed at a time (radio
/// behaviour; a toggle button, unlike a GTK 4.8 check button, can be pressed by a screen reader).
private final class ChoiceEditor: SchemaKeyEditor {
    private var buttons: [(nick: String, button: ToggleButton)] = []

    init(key: SchemaKey, nicks: [String], group: PreferencesGroup) {
        super.init(key: key)
        let column = Box(vertical: true)
        column.addStyleClass("linked")
        column.setAccessibleLabel("Choices of \(key.name)")
        for nick in nicks {
            let button = ToggleButton(label: nick)
            if let leader = buttons.first?.button { button.joinGroup(of: leader) }
            column.append(button)
            button.onToggled { [weak self, weak button] in
                guard let self, let button, button.isActive, !self.updating else { return }
                self.submit { () throws(SchemaError) in try self.key.value(nick: nick) }
            }
            buttons.append((nick, button))
        }
        group.add(column)
        controls.append(column)
    }

    override func show(_ stored: PropertyListValue?) {
        let nick = key.nick(stored)
        updating = true
        for (each, button) in buttons where each == nick && !button.isActive { button.isActive = true }
        updating = false
    }
}

/// A flags key: one row per nick with a check box.
private final class FlagsEditor: SchemaKeyEditor {
    private var boxes: [(nick: String, box: CheckButton)] = []

    init(key: SchemaKey, nicks: [String], group: PreferencesGroup) {
        super.init(key: key)
        for nick in nicks {
            let row = ActionRow(title: nick)
            row.usePlainText()
            let box = CheckButton()
            row.addPrefix(box)
            row.setActivatableWidget(box)
            group.add(row)
            box.onToggled { [weak self] in
                guard let self, !self.updating else { return }
                let chosen = self.boxes.filter { $0.box.isChecked }.map(\.nick)
                self.submit { () throws(SchemaError) in try self.key.value(flags: chosen) }
            }
            boxes.append((nick, box))
            controls.append(row)
        }
    }

    override func show(_ stored: PropertyListValue?) {
        let set = Set(key.flags(stored))
        updating = true
        for (nick, box) in boxes where box.isChecked != set.contains(nick) { box.isChecked = set.contains(nick) }
        updating = false
    }
}

/// A boolean: a row with a switch.
private final class SwitchEditor: SchemaKeyEditor {
    private let toggle = Switch()

    init(key: SchemaKey, group: PreferencesGroup) {
        super.init(key: key)
        let row = ActionRow(title: key.summary ?? key.name)
        row.usePlainText()
        toggle.setAccessibleLabel(key.name)
        row.addSuffix(toggle)
        row.setActivatableWidget(toggle)
        group.add(row)
        controls.append(toggle)
        toggle.onToggled { [weak self] in
            guard let self, !self.updating else { return }
            self.onChoose(.boolean(self.toggle.isOn))
        }
    }

    override func show(_ stored: PropertyListValue?) {
        let on = key.effectiveValue(stored) == .boolean(true)
        guard toggle.isOn != on else { return }
        updating = true
        toggle.isOn = on
        updating = false
    }
}

/// A number (bounded by the key's range, checked before writing) or a string in a one-line
/// field named after the key, saved with Enter or Apply.
private final class TextFieldEditor: SchemaKeyEditor {
    enum Kind { case number, string }
    private let kind: Kind
    private let entry: EntryRow
    private var shown: String?

    init(key: SchemaKey, group: PreferencesGroup, kind: Kind) {
        self.kind = kind
        entry = EntryRow(title: key.name)
        super.init(key: key)
        entry.showApplyButton()
        group.add(entry)
        let apply = Button(label: "Apply")
        apply.setAccessibleLabel("Apply \(key.name)")
        group.add(apply)
        controls += [entry, apply]
        entry.onApply { [weak self] in self?.save() }
        apply.onClicked { [weak self] in self?.save() }
    }

    private func save() {
        let text = entry.text
        switch kind {
        case .number: submit { () throws(SchemaError) in try key.value(parsing: text.trimmingCharacters(in: .whitespaces)) }
        case .string: submit { () throws(SchemaError) in try key.value(string: text) }
        }
    }

    override func show(_ stored: PropertyListValue?) {
        let text: String
        switch (kind, key.effectiveValue(stored)) {
        case (.string, .string(let value)): text = value
        case (.number, .integer(let number)): text = String(number)
        case (.number, let value): text = key.text(value)
        default: text = key.text(stored)
        }
        // Only a new stored value replaces what is in the field (not the user's typing).
        guard text != shown else { return }
        shown = text
        entry.text = text
    }
}

/// Any other type: GVariant text over several lines, parsed against the key's type.
private final class GVariantEditor: SchemaKeyEditor {
    private let view = TextView()
    private var shown: String?

    init(key: SchemaKey, group: PreferencesGroup) {
        super.init(key: key)
        view.setAccessibleLabel(key.name)
        view.setSizeRequest(width: -1, height: 120)
        view.addStyleClass("card")
        group.add(view)
        let apply = Button(label: "Apply")
        apply.setAccessibleLabel("Apply \(key.name)")
        group.add(apply)
        controls += [view, apply]
        apply.onClicked { [weak self] in
            guard let self else { return }
            let text = self.view.text
            self.submit { () throws(SchemaError) in try self.key.value(parsing: text) }
        }
    }

    override func show(_ stored: PropertyListValue?) {
        let text = key.text(stored)
        guard text != shown else { return }
        shown = text
        view.text = text
    }
}
