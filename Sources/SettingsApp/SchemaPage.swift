import Foundation
import GSettingsSchemas
import Gtk

/// A schema's page, built from the schema: a search field over key names and summaries,
/// then one row per key, titled with its summary, showing its value beside its default
/// and whether it is locked; a boolean's switch in the row; every key opens its own page
/// (``SchemaKeyPage``) with its description and editor.
final class SchemaPage: DomainPage {
    let instance: SchemaInstance
    var domain: String { instance.domain }
    var title: String { instance.schema.id }
    var widget: Widget { page }
    private let page = PreferencesPage()
    private let search = SearchEntry(placeholder: "Search keys")
    private let group: PreferencesGroup
    private var rows: [KeyListRow] = []
    private unowned let controller: SettingsController

    init(instance: SchemaInstance, controller: SettingsController, push: @escaping (any DomainPage) -> Void) {
        self.instance = instance
        self.controller = controller
        group = PreferencesGroup(title: "Keys", description: "\(instance.schema.id) at \(instance.path)")
        let searchGroup = PreferencesGroup(title: nil)
        searchGroup.add(search)
        page.add(searchGroup)
        page.add(group)
        for key in instance.schema.keys {
            let row = KeyListRow(key: key, instance: instance, controller: controller) {
                push(SchemaKeyPage(key: key, instance: instance, controller: controller))
            }
            group.add(row.row)
            rows.append(row)
        }
        search.onSearchChanged { [weak self] in self?.filter() }
        refresh()
    }

    func refresh() {
        for row in rows { row.refresh() }
    }

    private func filter() {
        let query = search.text.lowercased().trimmingCharacters(in: .whitespaces)
        for row in rows {
            row.row.isVisible = query.isEmpty || row.haystack.contains(query)
        }
    }
}

/// One key in a schema's list.
private final class KeyListRow {
    let key: SchemaKey
    let instance: SchemaInstance
    let row: ActionRow
    /// What search matches: the name and summary, lowercased.
    let haystack: String
    private let toggle: Switch?
    private var updating = false
    private unowned let controller: SettingsController

    init(key: SchemaKey, instance: SchemaInstance, controller: SettingsController, open: @escaping () -> Void) {
        self.key = key
        self.instance = instance
        self.controller = controller
        haystack = (key.name + "\n" + (key.summary ?? "")).lowercased()
        row = ActionRow(title: key.summary ?? key.name)
        row.usePlainText()
        if key.type == "b" {
            let toggle = Switch()
            toggle.setAccessibleLabel(key.summary ?? key.name)
            row.addSuffix(toggle)
            self.toggle = toggle
        } else {
            toggle = nil
        }
        let edit = Button(iconName: "go-next-symbolic", label: "Edit \(key.name)")
        edit.addStyleClass("flat")
        edit.centerVertically()
        edit.onClicked(open)
        row.addSuffix(edit)
        toggle?.onToggled { [weak self] in self?.toggled() }
    }

    func refresh() {
        let state = SchemaKeyState(key, in: instance, controller: controller)
        row.subtitle = state.summaryLine
        guard let toggle else { return }
        toggle.isSensitive = !state.locked && state.prefsdKey != nil
        if state.locked { toggle.setAccessibleDescription(ErrorMessages.lockedReason) }
        guard let prefsdKey = state.prefsdKey, !controller.isWriting(instance.domain, prefsdKey) else { return }
        let on = key.effectiveValue(state.stored) == .boolean(true)
        if toggle.isOn != on {
            updating = true
            toggle.isOn = on
            updating = false
        }
    }

    private func toggled() {
        guard !updating, let toggle, let prefsdKey = instance.prefsdKey(key.name) else { return }
        controller.write(instance.domain, prefsdKey, .boolean(toggle.isOn), label: key.summary ?? key.name)
    }
}
