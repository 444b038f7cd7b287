import PreferencesModel

extension PreferencesProxy {
    /// The whole journal of `domain` (every domain when `""`; of `key` unless `""`) after
    /// change `after` (0: from the start), oldest first, read page by page: each `History`
    /// reply ends on a whole change, so the next page starts after the last sequence
    /// received, until a page comes back empty.
    public func fullHistory(_ domain: String, key: String = "", after: UInt64 = 0) async throws(PreferencesProxyError) -> [HistoryEntry] {
        var entries: [HistoryEntry] = []
        while true {
            let page = try await history(domain, key: key, after: entries.last?.sequence ?? after, limit: 0)
            guard !page.isEmpty else { return entries }
            entries += page
        }
    }

    /// How many of the newest entries ``undoLastChange(_:key:)`` reads first.
    static let recentEntriesForUndo: UInt32 = 64

    /// The change ``undoLastChange(_:key:)`` would undo: the newest entry of `domain` (of
    /// `key` when given) not made by an administrator's managed file (`who` = `managed`:
    /// a revert never undoes those), or `nil` when there is none.
    public static func lastUndoable(in entries: [HistoryEntry]) -> HistoryEntry? {
        entries.last { $0.who != "managed" }
    }

    /// Undoes the last change of `domain`, or of `key` only: `RevertTo` (or `RevertKeyTo`)
    /// the sequence right before it, so the exact values from before the change come
    /// back. The undo is itself a change, recorded with who = `restore`. Returns the
    /// entries of the change undone, one per key it changed (only `key`'s when given),
    /// empty when the history holds nothing to undo; `.notFound` when the journal no
    /// longer reaches back so far. This is `prefs undo` and the settings app's Undo.
    @discardableResult
    public func undoLastChange(_ domain: String, key: String? = nil) async throws(PreferencesProxyError) -> [HistoryEntry] {
        // The newest entries tell it, unless there are some and all are an administrator's
        // (or the reply bound cut them short): then the whole journal is read.
        var entries = try await recentHistory(domain, key: key ?? "", limit: Self.recentEntriesForUndo)
        var whole = false
        if !entries.isEmpty, Self.lastUndoable(in: entries) == nil {
            entries = try await fullHistory(domain, key: key ?? "")
            whole = true
        }
        guard let last = Self.lastUndoable(in: entries) else { return [] }
        var undone = entries.filter { $0.sequence == last.sequence }
        // The newest entries may begin inside the change: its other keys are older still,
        // and a page of `History` from the change on holds it whole.
        if !whole, entries.first?.sequence == last.sequence {
            undone = try await history(domain, key: key ?? "", after: last.sequence - 1).filter { $0.sequence == last.sequence }
        }
        let before = last.sequence - 1
        if let key {
            try await revertKeyTo(domain, key: key, sequence: before)
        } else {
            try await revertTo(domain, sequence: before)
        }
        return undone
    }
}
