import ArgumentParser
import Foundation
import PreferencesModel
import PreferencesProxy

extension Prefs {
    /// `prefs history [DOMAIN [KEY]] [--since TIME] [--limit N] [--json]`.
    public struct History: AsyncParsableCommand {
        /// The verb's name and help.
        public static let configuration = CommandConfiguration(
            commandName: "history",
            abstract: "Show who changed what, and when (newest last).",
            discussion: """
                One line per key changed: time (UTC), who, domain, key, then the old value and \
                the new one with an arrow between (strings quoted, `(none)` for a key that was \
                absent, `(removed)` for one removed). Who is \
                the app ID of a sandboxed app, else the program's name, `managed` for an \
                administrator's managed file and `restore` for `prefs undo`/`prefs restore`. \
                --json prints an array of objects with sequence, time (ISO 8601), domain, \
                key, who, removed, value and previous (value absent when removed, previous \
                absent when the key was new). Without DOMAIN, every domain's history.

                Examples:
                  prefs history com.example.Editor
                  prefs history com.example.Editor FontSize --limit 5
                  prefs history --since 2026-11-25T08:00:00Z --json
                """
        )

        /// The domain, or none for every domain.
        @Argument(help: "The domain (-g for the global domain); every domain when omitted.")
        public var domain: String?

        /// The key, or none for every key of the domain.
        @Argument(help: "The key; every key of the domain when omitted.")
        public var key: String?

        /// Only changes at or after this time.
        @Option(help: ArgumentHelp("Only changes at or after TIME (ISO 8601, like 2026-11-25T08:00:00Z or 2026-11-25).", valueName: "TIME"))
        public var since: String?

        /// Only the newest N changes.
        @Option(help: ArgumentHelp("Only the newest N entries.", valueName: "N"))
        public var limit: Int?

        /// JSON output.
        @Flag(help: "Print a JSON array.")
        public var json = false

        /// Creates the verb (ArgumentParser fills in its options).
        public init() {}

        /// Prints the history.
        public func run() async throws {
            if let limit, limit < 0 { throw PrefsError.usage("--limit must be 0 or more, not \(limit)") }
            let since = try self.since.map { text throws(PrefsError) in try HistoryTime.parse(text) }
            let client = try connect()
            defer { client.close() }
            var entries: [HistoryEntry]
            if let limit, since == nil {
                entries = try await client.newestHistory(domain ?? "", key: key ?? "", limit: limit)
            } else {
                entries = try await client.history(domain ?? "", key: key ?? "")
                if let since { entries = entries.filter { $0.time >= since } }
                if let limit { entries = Array(entries.suffix(limit)) }
            }
            if json {
                Output.line("[" + entries.map(HistoryFormatter.json).joined(separator: ",\n") + "]")
            } else {
                for entry in entries { Output.line(HistoryFormatter.line(entry)) }
            }
        }
    }

    /// `prefs undo DOMAIN [KEY]`.
    public struct Undo: AsyncParsableCommand {
        /// The verb's name and help.
        public static let configuration = CommandConfiguration(
            commandName: "undo",
            abstract: "Undo the domain's last change (or the key's).",
            discussion: """
                Puts back the exact values from before the change, and prints each key the \
                change touched as `prefs history` prints it, after "undone: ". The undo is \
                itself a change, recorded with who = restore, so it can be undone too. \
                Changes an administrator's managed file made are never undone.

                Examples:
                  prefs undo com.example.Editor
                  prefs undo com.example.Editor FontSize
                """
        )

        /// The domain.
        @Argument(help: "The domain (-g for the global domain).")
        public var domain: String

        /// The key, or none for the domain's last change.
        @Argument(help: "The key; the domain's last change when omitted.")
        public var key: String?

        /// Creates the verb (ArgumentParser fills in its options).
        public init() {}

        /// Reverts the last change.
        public func run() async throws {
            let client = try connect()
            defer { client.close() }
            let undone: [HistoryEntry]
            do throws(PreferencesProxyError) {
                undone = try await client.proxy.undoLastChange(domain, key: key)
            } catch let error where error.refusal?.name == .notFound {
                throw PrefsError.noHistory(error.message)
            } catch {
                throw PrefsClient.map(error, domain: domain, key: nil)
            }
            guard !undone.isEmpty else {
                throw PrefsError.noHistory("the history holds no change of \(key.map { "\"\($0)\" in " } ?? "")\(domain) to undo")
            }
            // What was undone, as `prefs history` prints it, one line per key the change
            // touched: the undo itself is the next entry of the history.
            for entry in undone { Output.line("undone: \(HistoryFormatter.line(entry))") }
        }
    }

    /// `prefs restore DOMAIN (--to TIME | --sequence N)`.
    public struct Restore: AsyncParsableCommand {
        /// The verb's name and help.
        public static let configuration = CommandConfiguration(
            commandName: "restore",
            abstract: "Put a domain back as it was at a time, or right after a change.",
            discussion: """
                --sequence 0 puts the domain back as it was before every recorded change. The \
                restore is one atomic change, recorded with who = restore (so it can be \
                undone); keys an administrator forces are left alone. It prints each key it \
                changed as `prefs history` prints it, after "restored: ", or "nothing to \
                restore" when the domain was already so.

                Examples:
                  prefs restore com.example.Editor --to 2026-11-25T08:00:00Z
                  prefs restore com.example.Editor --sequence 41
                """
        )

        /// The domain.
        @Argument(help: "The domain (-g for the global domain).")
        public var domain: String

        /// The time to go back to.
        @Option(help: ArgumentHelp("Go back to the domain as it was at TIME (ISO 8601).", valueName: "TIME"))
        public var to: String?

        /// The change to go back to.
        @Option(help: ArgumentHelp("Go back to the domain as it was right after change N (0: before every recorded change).", valueName: "N"))
        public var sequence: UInt64?

        /// Creates the verb (ArgumentParser fills in its options).
        public init() {}

        /// Checks that exactly one of --to and --sequence is given.
        public func validate() throws {
            if (to == nil) == (sequence == nil) {
                throw ValidationError("give exactly one of --to TIME and --sequence N")
            }
        }

        /// Reverts the domain.
        public func run() async throws {
            let client = try connect()
            defer { client.close() }
            let target: UInt64
            let state: String
            if let sequence {
                target = sequence
                state = sequence == 0 ? "before every recorded change" : "right after change \(sequence)"
            } else {
                let time = try HistoryTime.parse(to ?? "")
                // The state at `time` is the state right after the domain's last change
                // made at or before it.
                target = try await client.history(domain, key: "").last(where: { $0.time <= time })?.sequence ?? 0
                state = "at \(to ?? "")"
            }
            // The restore is the domain's first change by `restore` after its newest one
            // now; when it changes nothing, the history gets no entry.
            let newest = try await client.newestHistory(domain, key: "", limit: 1).last?.sequence ?? 0
            try await client.revert(PreferencesCall.revertTo(domain, sequence: target), domain: domain)
            let after = try await client.history(domain, key: "", after: newest).filter { $0.who == HistoryFormatter.restore }
            let restored = after.filter { $0.sequence == after.first?.sequence }
            guard !restored.isEmpty else {
                return Output.line("nothing to restore: \(domain) is as it was \(state)")
            }
            // What the restore changed, as `prefs history` prints it, one line per key.
            for entry in restored { Output.line("restored: \(HistoryFormatter.line(entry))") }
        }
    }
}

extension PrefsClient {
    /// The history of `domain` (every domain when `""`; of `key` unless `""`) after change
    /// `after` (the whole history: 0), oldest first, read page by page.
    func history(_ domain: String, key: String, after: UInt64 = 0) async throws(PrefsError) -> [HistoryEntry] {
        do throws(PreferencesProxyError) {
            return try await proxy.fullHistory(domain, key: key, after: after)
        } catch {
            throw Self.map(error, domain: domain.isEmpty ? nil : domain, key: nil)
        }
    }

    /// The newest `limit` entries of `domain` (of `key` unless `""`), oldest first, asked
    /// for with `RecentHistory`, so the cost does not grow with the journal. A reply with
    /// fewer entries than asked for means a short journal or a reply bound reached: then
    /// the whole journal is read (cheap when it is short), so the count is exact either way.
    func newestHistory(_ domain: String, key: String, limit: Int) async throws(PrefsError) -> [HistoryEntry] {
        guard limit > 0 else { return [] }
        do throws(PreferencesProxyError) {
            if let asked = UInt32(exactly: limit) {
                let recent = try await proxy.recentHistory(domain, key: key, limit: asked)
                if recent.count == limit { return recent }
            }
            return Array(try await proxy.fullHistory(domain, key: key).suffix(limit))
        } catch {
            throw Self.map(error, domain: domain.isEmpty ? nil : domain, key: nil)
        }
    }

    /// Sends a `RevertTo` or `RevertKeyTo`, with a `NotFound` answer said as what it means.
    func revert(_ request: PreferencesRequest<Void>, domain: String) async throws(PrefsError) {
        do {
            try await proxy.perform(request)
        } catch let error where error.refusal?.name == .notFound {
            throw .noHistory(error.message)
        } catch {
            throw Self.map(error, domain: domain, key: nil)
        }
    }
}

/// Times as `prefs history`, `undo` and `restore` read and print them.
enum HistoryTime {
    /// `text` (ISO 8601: a date and time with a zone, or a date, taken as UTC midnight)
    /// in microseconds since 1970.
    static func parse(_ text: String) throws(PrefsError) -> Int64 {
        let full = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let day = ISO8601DateFormatter()
        day.formatOptions = [.withFullDate]
        guard let date = full.date(from: text) ?? fractional.date(from: text) ?? day.date(from: text) else {
            throw .usage("cannot read the time \"\(text)\"; write it in ISO 8601, like 2026-11-25T08:00:00Z or 2026-11-25")
        }
        return Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    }

    /// `microseconds` since 1970 in ISO 8601, UTC, with the fraction when there is one.
    static func format(_ microseconds: Int64) -> String {
        ValueText.iso8601(Double(microseconds) / 1_000_000)
    }
}

/// How `prefs history` prints an entry.
enum HistoryFormatter {
    /// The `who` of the changes `RevertTo` and `RevertKeyTo` make.
    static let restore = "restore"

    /// `TIME WHO DOMAIN KEY: OLD → NEW`, with `(none)` for an absent value and
    /// `(secure)` for the values of a key recorded without them (`IsSecure`).
    static func line(_ entry: HistoryEntry) -> String {
        let seconds = ValueText.iso8601((Double(entry.time) / 1_000_000).rounded(.down))
        if entry.secure {
            return PrefsError.oneLine("\(seconds) \(entry.who) \(entry.domain) \(OpenStepPropertyList.quoteIfNeeded(entry.key)): (secure) → (secure)")
        }
        let old = entry.previous.map(OutputFormatter.compact) ?? "(none)"
        let new = entry.value.map(OutputFormatter.compact) ?? "(removed)"
        return PrefsError.oneLine("\(seconds) \(entry.who) \(entry.domain) \(OpenStepPropertyList.quoteIfNeeded(entry.key)): \(old) → \(new)")
    }

    /// The entry as one JSON object.
    static func json(_ entry: HistoryEntry) -> String {
        var fields = [
            "\"sequence\":\(entry.sequence)",
            "\"time\":\(OutputFormatter.jsonString(HistoryTime.format(entry.time)))",
            "\"domain\":\(OutputFormatter.jsonString(entry.domain.rawValue))",
            "\"key\":\(OutputFormatter.jsonString(entry.key))",
            "\"who\":\(OutputFormatter.jsonString(entry.who))",
            "\"removed\":\(entry.value == nil && !entry.secure)",
        ]
        if entry.secure { fields.append("\"secure\":true") }
        if let value = entry.value { fields.append("\"value\":\(OutputFormatter.compactJSON(value))") }
        if let previous = entry.previous { fields.append("\"previous\":\(OutputFormatter.compactJSON(previous))") }
        return "{" + fields.joined(separator: ",") + "}"
    }
}
