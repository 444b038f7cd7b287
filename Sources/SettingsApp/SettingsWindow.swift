import Foundation
import Gtk
import PreferencesModel
import SettingsBundle

/// The Settings window: a sidebar of applications with a bundle and then every other
/// domain, with a search field; the chosen domain's pane (or raw editor) beside it, with
/// child panes pushed over it; an error bar that keeps refusals in view until dismissed.
final class SettingsWindow {
    private let controller: SettingsController
    let window: ApplicationWindow
    private let search = SearchEntry(placeholder: "Search settings")
    private let applications = ListBox()
    private let others = ListBox()
    private var entries: [SidebarEntry] = []
    private let windowTitle = WindowTitle(title: "Settings")
    private let back = Button(iconName: "go-previous-symbolic", label: "Back")
    private let historyButton = Button(iconName: "document-open-recent-symbolic", label: "History")
    private let errorBar = Box(vertical: false, spacing: 12)
    private let errorLabel = Label("", wraps: true)
    private let stack = Stack()
    private let placeholder = Label("Choose an application or a domain on the left.", wraps: true)
    private var pages: [any DomainPage] = []
    private var current: String?
    /// The domain to open once the domains are loaded (from the command line).
    var initialDomain: String?
    /// Whether to open the initial domain's History page (`--history`).
    var initialHistory = false
    /// The GSettings directory or key to open in the initial domain (`prefs-settings /org/gnome/desktop/interface/`).
    var initialPath: String?

    init(application: Application, controller: SettingsController) {
        self.controller = controller
        window = ApplicationWindow(application: application, title: "Settings", width: 960, height: 700)

        let sidebar = Box(vertical: true)
        sidebar.setSizeRequest(width: 280, height: -1)
        let sidebarHeader = HeaderBar(showsWindowButtons: false)
        sidebarHeader.setTitleWidget(Label("Settings"))
        sidebar.append(sidebarHeader)
        search.setMargins(6)
        sidebar.append(search)
        let lists = Box(vertical: true, spacing: 6)
        for (heading, list) in [("Applications", applications), ("Other Domains", others)] {
            let label = Label(heading)
            label.addStyleClass("heading")
            label.setMargins(8)
            lists.append(label)
            list.addStyleClass("navigation-sidebar")
            list.setAccessibleLabel(heading)
            lists.append(list)
        }
        let scroller = ScrolledWindow()
        scroller.setChild(lists)
        scroller.expandsVertically = true
        sidebar.append(scroller)

        let content = Box(vertical: true)
        content.expandsHorizontally = true
        let header = HeaderBar()
        header.setTitleWidget(windowTitle)
        back.isVisible = false
        header.packStart(back)
        historyButton.isVisible = false
        header.packEnd(historyButton)
        content.append(header)
        errorBar.addStyleClass("error")
        errorBar.setMargins(8)
        errorLabel.expandsHorizontally = true
        errorBar.append(errorLabel)
        let dismiss = Button(label: "Dismiss")
        errorBar.append(dismiss)
        errorBar.isVisible = false
        content.append(errorBar)
        stack.expandsVertically = true
        placeholder.setMargins(24)
        stack.push(placeholder, name: "placeholder")
        content.append(stack)

        let layout = Box(vertical: false)
        layout.append(sidebar)
        layout.append(Separator(vertical: true))
        layout.append(content)
        window.setContent(layout)

        dismiss.onClicked { [weak self] in self?.errorBar.isVisible = false }
        back.onClicked { [weak self] in self?.popPage() }
        historyButton.onClicked { [weak self] in self?.showHistory() }
        search.onSearchChanged { [weak self] in self?.filter() }
        applications.onRowSelected { [weak self] in self?.selectionChanged(in: self?.applications) }
        others.onRowSelected { [weak self] in self?.selectionChanged(in: self?.others) }
    }

    // MARK: Sidebar

    /// Rebuilds the sidebar from the controller's domains, keeping the selection.
    func domainsLoaded() {
        for entry in entries { (entry.hasBundle ? applications : others).remove(entry.row) }
        entries = []
        let (withBundle, rest) = controller.domainsInOrder
        for domain in withBundle + rest {
            let bundle = controller.bundles[domain]
            let line = Box(vertical: false, spacing: 10)
            line.setMargins(6)
            line.append(Image(iconOrPath: bundle?.icon ?? (bundle == nil ? "folder-symbolic" : "application-x-executable")))
            let text = Box(vertical: true)
            let title = Label(controller.title(of: domain))
            title.ellipsizeAtEnd()
            text.append(title)
            if bundle != nil {
                let subtitle = Label(domain)
                subtitle.addStyleClass("dim-label")
                subtitle.addStyleClass("caption")
                subtitle.ellipsizeAtEnd()
                text.append(subtitle)
            }
            line.append(text)
            let row = ListBoxRow(child: line)
            row.setAccessibleLabel(controller.title(of: domain))
            (bundle != nil ? applications : others).append(row)
            entries.append(SidebarEntry(domain: domain, row: row, hasBundle: bundle != nil, haystack: haystack(domain)))
        }
        filter()
        if let domain = current ?? initialDomain, let entry = entries.first(where: { $0.domain == domain }) {
            initialDomain = nil
            (entry.hasBundle ? applications : others).select(entry.row)
            if current == domain { for page in pages { page.refresh() } }
            if let path = initialPath {
                initialPath = nil
                SchemaPages.open(path: path, over: pages, controller: controller) { [weak self] in self?.push($0) }
            }
            if initialHistory {
                initialHistory = false
                showHistory()
            }
        }
    }

    /// The text a search matches: the domain, its title, the bundle's titles, its schemas'
    /// key names and summaries, keys and values.
    private func haystack(_ domain: String) -> String {
        var parts = [domain, controller.title(of: domain)]
        if let bundle = controller.bundles[domain] {
            for pane in bundle.panes {
                parts += pane.specifiers.flatMap { [$0.title, $0.key].compactMap { $0 } + $0.titles }
            }
        }
        parts += SchemaCatalog.searchText(domain)
        for (key, value) in controller.values(in: domain) {
            parts.append(key)
            parts.append(ValueEditing.text(value))
        }
        return parts.joined(separator: "\n").lowercased()
    }

    private func filter() {
        let query = search.text.lowercased().trimmingCharacters(in: .whitespaces)
        for entry in entries {
            entry.row.isVisible = query.isEmpty || entry.haystack.contains(query)
        }
    }

    private func selectionChanged(in list: ListBox?) {
        guard let list, let entry = entries.first(where: { $0.row.isSelected && ($0.hasBundle ? applications : others) === list }) else { return }
        (list === applications ? others : applications).select(nil)
        guard entry.domain != current else { return }
        open(entry.domain)
    }

    // MARK: Pages

    private func open(_ domain: String) {
        for page in pages { stack.remove(page.widget) }
        pages = []
        current = domain
        if let bundle = controller.bundles[domain] {
            push(bundlePage(bundle, pane: bundle.root, isRoot: true))
            if !bundle.problems.isEmpty {
                showError(
                    "This application's settings bundle has problems; the rest of it works:\n"
                        + bundle.problems.map(\.description).joined(separator: "\n"))
            }
        } else if let page = SchemaPages.root(for: domain, controller: controller, push: { [weak self] in self?.push($0) }) {
            push(page)
        } else {
            push(RawEditorPage(domain: domain, controller: controller))
        }
    }

    private func bundlePage(_ bundle: SettingsBundle, pane: SettingsPane, isRoot: Bool) -> BundlePage {
        BundlePage(
            domain: bundle.domain, pane: pane, bundleTitle: bundle.title ?? bundle.domain, isRoot: isRoot,
            controller: controller
        ) { [weak self] file in
            guard let self, let child = bundle.pane(named: file) else { return }
            self.push(self.bundlePage(bundle, pane: child, isRoot: false))
        }
    }

    private func push(_ page: any DomainPage) {
        pages.append(page)
        stack.push(page.widget, name: "page\(pages.count)-\(page.domain)")
        showTitle()
    }

    private func popPage() {
        guard pages.count > 1, let top = pages.popLast(), let below = pages.last else { return }
        stack.show(below.widget)
        stack.remove(top.widget)
        below.refresh()
        showTitle()
    }

    private func showTitle() {
        guard let page = pages.last else { return }
        windowTitle.set(title: page.title, subtitle: page.domain)
        back.isVisible = pages.count > 1
        historyButton.isVisible = !(page is HistoryPage)
    }

    /// Opens the current domain's History page over its pages.
    private func showHistory() {
        guard let domain = current, !(pages.last is HistoryPage) else { return }
        push(HistoryPage(domain: domain, controller: controller))
    }

    /// Shows a domain's history on its History page, if that is open.
    func historyLoaded(_ entries: [HistoryEntry], in domain: String) {
        guard domain == current else { return }
        for case let page as HistoryPage in pages where page.domain == domain { page.show(entries) }
    }

    /// Shows the domain's new values and locks, and updates what search finds.
    func valuesChanged(in domain: String) {
        if let index = entries.firstIndex(where: { $0.domain == domain }) { entries[index].haystack = haystack(domain) }
        guard domain == current else { return }
        for page in pages { page.refresh() }
    }

    /// Shows `message` in the error bar until dismissed (and on standard error).
    func showError(_ message: String) {
        FileHandleOutput.warn(message)
        errorLabel.text = message
        errorBar.isVisible = true
    }
}

/// One domain in the sidebar.
private struct SidebarEntry {
    var domain: String
    var row: ListBoxRow
    var hasBundle: Bool
    var haystack: String
}
