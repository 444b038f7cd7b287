import Gtk
import PreferencesModel

/// One key of the raw editor: ``KeyRow`` (a one-line field) or ``ListKeyRow`` (arrays and
/// dictionaries, one item per line). Both show the key's type, reset their field to the
/// stored value, delete the key and save what was typed the same way, through the members
/// below; they differ only in their field.
protocol RawKeyRow: AnyObject {
    /// The row's widget in the keys group.
    var widget: Widget { get }
    /// The domain and the key the row shows.
    var domain: String { get }
    var key: String { get }
    /// The window's controller, which reads and writes prefsd.
    var controller: SettingsController { get }
    /// Shows the stored value (unless a write of it is on its way) and whether it is locked.
    func show(_ value: PropertyListValue, locked: Bool)
}

extension RawKeyRow {
    /// The flat button that puts the stored value of `key` back in the field.
    static func makeResetButton(_ key: String) -> Button {
        let reset = Button(iconName: "edit-undo-symbolic", label: "Reset \(key) to its stored value")
        reset.addStyleClass("flat")
        return reset
    }

    /// The flat button that deletes `key` (``removesKey(_:)`` makes it do so).
    static func makeDeleteButton(_ key: String) -> Button {
        let delete = Button(iconName: "user-trash-symbolic", label: "Delete \(key)")
        delete.addStyleClass("flat")
        return delete
    }

    /// Makes `button` remove the key from prefsd when clicked.
    func removesKey(_ button: Button) {
        button.onClicked { [weak self] in
            guard let self else { return }
            self.controller.write(self.domain, self.key, nil, label: self.key)
        }
    }

    /// The type shown beside `value`, and whether the key holds only the administrator's
    /// default (not the user's value, so there is nothing of theirs to delete).
    func caption(for value: PropertyListValue, locked: Bool) -> (text: String, administrators: Bool) {
        let administrators = !locked && controller.readsAdministratorDefault(domain, key)
        let text = locked ? "\(value.typeName), locked" : administrators ? "\(value.typeName), default set by your administrator" : value.typeName
        return (text, administrators)
    }

    /// Writes `text` parsed as a value of type `typeName`, or says in the window why it
    /// was not saved.
    func save(_ text: String, as typeName: String) {
        do {
            controller.write(domain, key, try ValueEditing.parse(text, as: typeName), label: key)
        } catch {
            controller.window?.showError("“\(key)” was not saved: \(error.message).")
        }
    }
}
