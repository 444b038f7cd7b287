import Gtk
import PreferencesModel

/// A key of the raw editor whose value is an array or a dictionary: its name and type over
/// a multi-line field holding the value as old-style property-list text, one item per line
/// (as `prefs read` prints it), saved with Apply, reset to the stored value, deleted.
final class ListKeyRow: RawKeyRow {
    let domain: String
    let key: String
    let widget: Widget
    private let header: ActionRow
    private let view = TextView()
    private let apply: Button
    private let delete: Button
    private var stored: PropertyListValue?
    private unowned let controller: SettingsController

    /// Whether `value` is edited in a ``ListKeyRow`` (an array or a dictionary).
    static func isList(_ value: PropertyListValue) -> Bool {
        switch value {
        case .array, .dictionary: true
        default: false
        }
    }

    init(domain: String, key: String, controller: SettingsController) {
        self.domain = domain
        self.key = key
        self.controller = controller
        let box = Box(vertical: true, spacing: 6)
        box.setMargins(6)
        header = ActionRow(title: key)
        header.usePlainText()
        box.append(header)
        view.setAccessibleLabel(key)
        view.setSizeRequest(width: -1, height: 80)
        view.addStyleClass("card")
        box.append(view)
        let buttons = Box(vertical: false, spacing: 6)
        apply = Button(label: "Apply")
        apply.setAccessibleLabel("Apply \(key)")
        let reset = Button(iconName: "edit-undo-symbolic", label: "Reset \(key) to its stored value")
        reset.addStyleClass("flat")
        delete = Button(iconName: "user-trash-symbolic", label: "Delete \(key)")
        delete.addStyleClass("flat")
        buttons.append(apply)
        buttons.append(reset)
        buttons.append(delete)
        box.append(buttons)
        widget = box
        apply.onClicked { [weak self] in self?.save() }
        reset.onClicked { [weak self] in
            guard let self, let stored = self.stored else { return }
            self.view.text = OpenStepPropertyList.describe(stored)
        }
        delete.onClicked { [weak self] in
            guard let self else { return }
            self.controller.write(self.domain, self.key, nil, label: self.key)
        }
    }

    func show(_ value: PropertyListValue, locked: Bool) {
        view.isEditable = !locked
        apply.isSensitive = !locked
        widget.tooltip = locked ? ErrorMessages.lockedReason : nil
        if locked { view.setAccessibleDescription(ErrorMessages.lockedReason) }
        // Only the administrator's default: not the user's value, and nothing of theirs to delete.
        let administrators = !locked && controller.readsAdministratorDefault(domain, key)
        header.subtitle = locked ? "\(value.typeName), locked" : administrators ? "\(value.typeName), default set by your administrator" : value.typeName
        delete.isSensitive = !administrators
        guard value != stored, !controller.isWriting(domain, key) else { return }
        stored = value
        view.text = OpenStepPropertyList.describe(value)
    }

    private func save() {
        let typeName = stored?.typeName ?? "array"
        do {
            controller.write(domain, key, try ValueEditing.parse(view.text, as: typeName), label: key)
        } catch {
            controller.window?.showError("“\(key)” was not saved: \(error.message).")
        }
    }
}
