import Foundation
import Gtk
import PreferencesModel
import PreferencesProxy

/// A domain's History: its recent changes, newest first, each as "key: old → new" over
/// "by WHO · TIME", read from prefsd's change journal and read again whenever the domain
/// changes; and Undo, which undoes the domain's last change as `prefs undo` does.
final class HistoryPage: DomainPage {
    let domain: String
    var title: String { "History" }
    var widget: Widget { page }
    /// At most this many changes are shown (the newest).
    static let shownEntries = 200
    private let page = PreferencesPage()
    private let undoRow = ActionRow(title: "Last change")
    private let undo = Button(label: "Undo")
    private let changesGroup = PreferencesGroup(title: "Changes", description: "Newest first; who is the program (or app ID) that made the change.")
    private var rows: [ActionRow] = []
    private unowned let controller: SettingsController

    init(domain: String, controller: SettingsController) {
        self.domain = domain
        self.controller = controller
        let undoGroup = PreferencesGroup(title: nil)
        undoRow.usePlainText()
        undoRow.subtitle = "Reading the history…"
        undo.tooltip = "Put back the values from before the last change (the undo can itself be undone)"
        undo.centerVertically()
        undo.isSensitive = false
        undo.onClicked { [weak self] in
            guard let self else { return }
            self.controller.undoLastChange(self.domain)
        }
        undoRow.addSuffix(undo)
        undoGroup.add(undoRow)
        page.add(undoGroup)
        page.add(changesGroup)
        refresh()
    }

    /// Reads the history again (the domain changed); ``show(_:)`` gets it.
    func refresh() {
        controller.loadHistory(domain)
    }

    /// Shows `entries` (oldest first, as `History` answers) newest first.
    func show(_ entries: [HistoryEntry]) {
        for row in rows { changesGroup.remove(row) }
        rows = []
        let last = PreferencesProxy.lastUndoable(in: entries)
        undo.isSensitive = last != nil
        undoRow.subtitle = last.map { "\(Self.change($0)), by \($0.who)" } ?? "Nothing to undo"
        if entries.isEmpty {
            let row = ActionRow(title: "No changes recorded", subtitle: "prefsd records every change of a persistent domain from now on.")
            changesGroup.add(row)
            rows.append(row)
            return
        }
        let formatter = Self.timeFormatter()
        for entry in entries.suffix(Self.shownEntries).reversed() {
            let row = ActionRow(title: Self.change(entry))
            row.usePlainText()
            row.subtitle = "by \(entry.who) · \(formatter.string(from: Date(timeIntervalSince1970: Double(entry.time) / 1_000_000)))"
            changesGroup.add(row)
            rows.append(row)
        }
    }

    /// `KEY: OLD → NEW` as `prefs history` prints it, `(none)` and `(removed)` for an absent
    /// value, `(secure)` for both values of a key recorded without them (`IsSecure`).
    static func change(_ entry: HistoryEntry) -> String {
        if entry.secure { return "\(entry.key): (secure) → (secure)" }
        let old = entry.previous.map(ValueText.compact) ?? "(none)"
        let new = entry.value.map(ValueText.compact) ?? "(removed)"
        return "\(entry.key): \(old) → \(new)"
    }

    /// Shows a time as a local date and time to the second (made once per refresh).
    static func timeFormatter() -> DateFormatter {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter
    }
}
