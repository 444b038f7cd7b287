import Gtk
import SettingsBundle

/// A page of the window: a bundle's pane or the raw editor of a domain.
protocol DomainPage: AnyObject {
    /// The domain it edits.
    var domain: String { get }
    /// The page's widget.
    var widget: Widget { get }
    /// Its title in the header bar.
    var title: String { get }
    /// Shows the controller's current values and locks.
    func refresh()
}

/// A settings bundle's pane built from its specifiers with libadwaita's preference
/// widgets: groups, switch rows, entry rows, combo rows, sliders, radio groups, read-only
/// values, and rows opening child panes.
final class BundlePage: DomainPage {
    let domain: String
    let title: String
    private let page = PreferencesPage()
    private var bindings: [SettingBinding] = []
    var widget: Widget { page }

    /// Builds the page for `pane`; `openChild` is called with a child pane's `File`.
    init(
        domain: String, pane: SettingsPane, bundleTitle: String, isRoot: Bool, controller: SettingsController,
        openChild: @escaping (String) -> Void
    ) {
        self.domain = domain
        title = isRoot ? bundleTitle : (pane.title ?? bundleTitle)
        var group: PreferencesGroup?
        func currentGroup() -> PreferencesGroup {
            if let group { return group }
            let made = PreferencesGroup(title: nil)
            page.add(made)
            group = made
            return made
        }
        for specifier in pane.specifiers {
            switch specifier.type {
            case .group:
                let made = PreferencesGroup(title: specifier.title, description: specifier.footerText)
                page.add(made)
                group = made
            case .radioGroup:
                let made = PreferencesGroup(title: specifier.title, description: specifier.footerText)
                page.add(made)
                bindings.append(RadioBinding(domain: domain, specifier: specifier, group: made, controller: controller))
                group = nil
            case .toggleSwitch:
                add(ToggleBinding(domain: domain, specifier: specifier, controller: controller), to: currentGroup())
            case .textField:
                add(TextBinding(domain: domain, specifier: specifier, controller: controller), to: currentGroup())
            case .slider:
                add(SliderBinding(domain: domain, specifier: specifier, controller: controller), to: currentGroup())
            case .multiValue:
                add(ChoiceBinding(domain: domain, specifier: specifier, controller: controller), to: currentGroup())
            case .titleValue:
                add(TitleValueBinding(domain: domain, specifier: specifier, controller: controller), to: currentGroup())
            case .childPane:
                let row = ActionRow(title: specifier.title ?? specifier.file ?? "")
                row.addSuffix(Image(iconOrPath: "go-next-symbolic"))
                row.makeActivatable()
                let file = specifier.file ?? ""
                row.onActivated { openChild(file) }
                currentGroup().add(row)
            }
        }
        if isRoot {
            let resetGroup = PreferencesGroup(title: nil)
            let reset = Button(label: "Reset to Defaults")
            reset.tooltip = "Remove every value set here, so the application's defaults apply again"
            reset.onClicked { [weak controller] in controller?.resetToDefaults(domain) }
            resetGroup.add(reset)
            page.add(resetGroup)
        }
        refresh()
    }

    private func add(_ binding: SettingBinding, to group: PreferencesGroup) {
        group.add(binding.row)
        bindings.append(binding)
    }

    func refresh() {
        for binding in bindings { binding.refresh() }
    }
}
