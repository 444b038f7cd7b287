import GSettingsSchemas
import Gtk
import PreferencesModel

/// One key of a schema, as dconf-editor's key page shows it: summary, description, where
/// it lives, its type, its default beside the value in use, an editor chosen by the
/// key's type (``SchemaKeyEditor``), and Reset to Default. A locked (forced) key shows
/// the administrator's value and cannot be edited.
final class SchemaKeyPage: DomainPage {
    let key: SchemaKey
    let instance: SchemaInstance
    var domain: String { instance.domain }
    var title: String { key.name }
    var widget: Widget { page }
    private let page = PreferencesPage()
    private let valueRow = ActionRow(title: "Value in use")
    private let defaultRow = ActionRow(title: "Default")
    private let lockLabel = Label(ErrorMessages.lockedReason, wraps: true)
    private let reset = Button(label: "Reset to Default")
    private let editor: SchemaKeyEditor
    private unowned let controller: SettingsController

    init(key: SchemaKey, instance: SchemaInstance, controller: SettingsController) {
        self.key = key
        self.instance = instance
        self.controller = controller
        let about = PreferencesGroup(title: nil)
        let summary = Label(key.summary ?? key.name, wraps: true)
        summary.addStyleClass("title-2")
        about.add(summary)
        if let description = key.description {
            let text = Label(description, wraps: true)
            text.setMargins(6)
            about.add(text)
        }
        page.add(about)

        let facts = PreferencesGroup(title: "Key")
        for (name, value) in [
            ("Path", instance.path + key.name), ("Schema", instance.schema.id), ("Type", Self.typeText(key)),
            ("Allowed", key.allowedDescription),
        ] {
            let row = ActionRow(title: name, subtitle: value)
            row.usePlainText()
            facts.add(row)
        }
        defaultRow.usePlainText()
        valueRow.usePlainText()
        facts.add(defaultRow)
        facts.add(valueRow)
        page.add(facts)

        let editGroup = PreferencesGroup(title: "Value", description: SchemaKeyEditor.hint(for: key))
        editor = SchemaKeyEditor.make(for: key, group: editGroup)
        lockLabel.addStyleClass("error")
        lockLabel.isVisible = false
        editGroup.add(lockLabel)
        page.add(editGroup)

        let resetGroup = PreferencesGroup(title: nil)
        reset.tooltip = "Remove your value, so the schema's default (or an administrator's) applies again"
        resetGroup.add(reset)
        page.add(resetGroup)

        editor.onChoose = { [weak self] value in self?.write(value) }
        editor.onRefuse = { [weak self] error in
            guard let self else { return }
            self.controller.window?.showError("“\(self.key.summary ?? self.key.name)” was not saved: \(error.description).")
        }
        reset.onClicked { [weak self] in self?.write(nil) }
        refresh()
    }

    func refresh() {
        let state = SchemaKeyState(key, in: instance, controller: controller)
        defaultRow.subtitle =
            state.administratorDefault == nil
            ? SchemaKeyState.oneLine(key.defaultText)
            : "\(SchemaKeyState.oneLine(state.defaultText)), set by your administrator (the schema's: \(SchemaKeyState.oneLine(key.defaultText)))"
        valueRow.subtitle =
            state.locked
            ? "\(SchemaKeyState.oneLine(key.text(state.stored))) (locked)"
            : state.isSet
                ? SchemaKeyState.oneLine(key.text(state.stored))
                : state.readsAdministratorDefault
                    ? "default set by your administrator: \(SchemaKeyState.oneLine(state.defaultText))"
                    : "the default"
        let editable = !state.locked && state.prefsdKey != nil
        lockLabel.text =
            state.prefsdKey == nil
            ? "This key's path cannot be stored in prefsd (see the README's path rule)." : ErrorMessages.lockedReason
        lockLabel.isVisible = !editable
        // Reset only removes the user's own value: offered when there is one.
        reset.isSensitive = editable && state.own != nil
        editor.setEditable(editable, reason: state.locked ? ErrorMessages.lockedReason : nil)
        guard let prefsdKey = state.prefsdKey, !controller.isWriting(domain, prefsdKey) else { return }
        editor.show(state.stored)
    }

    /// The GVariant type, and what an enum or flags key stores under it.
    static func typeText(_ key: SchemaKey) -> String {
        switch key.choices {
        case .enumeration: "\(key.type) (an enum: one nick, stored as a string)"
        case .flags: "\(key.type) (flags: a set of nicks, stored as strings)"
        default: key.type
        }
    }

    /// Writes a value the editor validated (`nil`: removes the user's value).
    private func write(_ value: PropertyListValue?) {
        guard let prefsdKey = instance.prefsdKey(key.name) else { return }
        controller.write(domain, prefsdKey, value, label: key.summary ?? key.name)
    }
}
