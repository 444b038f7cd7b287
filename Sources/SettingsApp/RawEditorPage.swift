import Gtk
import PreferencesModel

/// The editor for a domain without a settings bundle, in the manner of dconf-editor:
/// every key with its type and value, edited in place (Enter or the apply button; arrays
/// and dictionaries one item per line in a multi-line field, with Apply),
/// reset (back to the stored value), deleted, and new keys added with a type.
final class RawEditorPage: DomainPage {
    let domain: String
    var title: String { domain }
    var widget: Widget { page }
    private let page = PreferencesPage()
    private let keysGroup = PreferencesGroup(title: "Keys", description: "Edit a value and press Enter to save it.")
    private var rows: [String: any RawKeyRow] = [:]
    private unowned let controller: SettingsController
    private let newKey = EntryRow(title: "New key")
    private let newType = ComboRow(title: "Type", items: ValueEditing.typeNames)
    private let newValue = EntryRow(title: "Value")

    init(domain: String, controller: SettingsController) {
        self.domain = domain
        self.controller = controller
        let addGroup = PreferencesGroup(title: "Add a Key")
        addGroup.add(newKey)
        addGroup.add(newType)
        addGroup.add(newValue)
        let add = Button(label: "Add")
        add.onClicked { [weak self] in self?.addKey() }
        newValue.onApply { [weak self] in self?.addKey() }
        newValue.showApplyButton()
        addGroup.add(add)
        page.add(keysGroup)
        page.add(addGroup)
        refresh()
    }

    private func addKey() {
        let key = newKey.text
        if let problem = PreferenceKey.problem(with: key) {
            controller.window?.showError("The new key is not valid: \(problem).")
            return
        }
        let typeName = ValueEditing.typeNames[min(newType.selected, ValueEditing.typeNames.count - 1)]
        do {
            let value = try ValueEditing.parse(newValue.text, as: typeName)
            controller.write(domain, key, value, label: key)
            newKey.text = ""
            newValue.text = ""
        } catch {
            controller.window?.showError("“\(key)” was not added: \(error.message).")
        }
    }

    func refresh() {
        let values = controller.values(in: domain)
        for (key, row) in rows where !controller.isWriting(domain, key) {
            // Gone, or now of the other kind (a list for a one-line field or back): made again.
            guard let value = values[key], (row is ListKeyRow) == ListKeyRow.isList(value) else {
                keysGroup.remove(row.widget)
                rows[key] = nil
                continue
            }
        }
        for (key, value) in values.sorted(by: { $0.key < $1.key }) where rows[key] == nil {
            let row: any RawKeyRow =
                ListKeyRow.isList(value)
                ? ListKeyRow(domain: domain, key: key, controller: controller)
                : KeyRow(domain: domain, key: key, controller: controller)
            keysGroup.add(row.widget)
            rows[key] = row
        }
        for (key, row) in rows {
            if let value = values[key] { row.show(value, locked: controller.isForced(domain, key)) }
        }
    }
}

/// One key of the raw editor: an entry row titled with the key, its type after it, and
/// buttons to reset the field and delete the key. (Arrays and dictionaries: ``ListKeyRow``.)
private final class KeyRow: RawKeyRow {
    let domain: String
    let key: String
    let entry: EntryRow
    var widget: Widget { entry }
    private let typeLabel = Label("")
    private let delete: Button
    private var stored: PropertyListValue?
    unowned let controller: SettingsController

    init(domain: String, key: String, controller: SettingsController) {
        self.domain = domain
        self.key = key
        self.controller = controller
        entry = EntryRow(title: key)
        delete = Self.makeDeleteButton(key)
        entry.showApplyButton()
        typeLabel.addStyleClass("dim-label")
        typeLabel.centerVertically()
        entry.addSuffix(typeLabel)
        let reset = Self.makeResetButton(key)
        reset.centerVertically()
        delete.centerVertically()
        entry.addSuffix(reset)
        entry.addSuffix(delete)
        entry.onApply { [weak self] in
            guard let self else { return }
            self.save(self.entry.text, as: self.stored?.typeName ?? "string")
        }
        reset.onClicked { [weak self] in
            guard let self, let stored = self.stored else { return }
            self.entry.text = ValueEditing.text(stored)
        }
        removesKey(delete)
    }

    func show(_ value: PropertyListValue, locked: Bool) {
        entry.isSensitive = !locked
        entry.tooltip = locked ? ErrorMessages.lockedReason : nil
        if locked { entry.setAccessibleDescription(ErrorMessages.lockedReason) }
        let caption = caption(for: value, locked: locked)
        typeLabel.text = caption.text
        delete.isSensitive = !caption.administrators
        guard value != stored, !controller.isWriting(domain, key) else { return }
        stored = value
        entry.text = ValueEditing.text(value)
    }
}
