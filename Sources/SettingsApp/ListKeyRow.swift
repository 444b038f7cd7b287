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
    unowned let controller: SettingsController

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
        let reset = Self.makeResetButton(key)
        delete = Self.makeDeleteButton(key)
        buttons.append(apply)
        buttons.append(reset)
        buttons.append(delete)
        box.append(buttons)
        widget = box
        apply.onClicked { [weak self] in
            guard let self else { return }
            self.save(self.view.text, as: self.stored?.typeName ?? "array")
        }
        reset.onClicked { [weak self] in
            guard let self, let stored = self.stored else { return }
            self.view.text = OpenStepPropertyList.describe(stored)
        }
        removesKey(delete)
    }

    func show(_ value: PropertyListValue, locked: Bool) {
        view.isEditable = !locked
        apply.isSensitive = !locked
        widget.tooltip = locked ? ErrorMessages.lockedReason : nil
        if locked { view.setAccessibleDescription(ErrorMessages.lockedReason) }
        let caption = caption(for: value, locked: locked)
        header.subtitle = caption.text
        delete.isSensitive = !caption.administrators
        guard value != stored, !controller.isWriting(domain, key) else { return }
        stored = value
        view.text = OpenStepPropertyList.describe(value)
    }
}
