import Glibc
import PreferencesModel

/// What `ca.desrt.dconf.ServiceInfo.Blame` tells when prefsd serves dconf: the recent
/// changes of dconf's keys, read from prefsd's change history, whichever interface made
/// them. A change made through dconf's writer while this prefsd runs also says which bus
/// connection and process sent it, as dconf-service's records do.
public struct DconfBlame: Sendable {
    /// A call to dconf's writer that made a change.
    public struct Call: Sendable, Hashable {
        /// The caller's unique name on the bus (`:1.42`).
        public var sender: String
        /// The caller's process, when the bus told it.
        public var processID: UInt32?
        /// The writer's object path.
        public var objectPath: String
        /// The method called (`Change`).
        public var method: String

        /// Makes a call record.
        public init(sender: String, processID: UInt32?, objectPath: String, method: String) {
            self.sender = sender
            self.processID = processID
            self.objectPath = objectPath
            self.method = method
        }
    }

    /// One key a change touched, as dconf's clients see it.
    public struct Key: Sendable, Hashable {
        /// The dconf key (`/org/gnome/desktop/interface/gtk-theme`).
        public var path: String
        /// Its new value; `nil` when it was reset.
        public var value: DconfValue?
        /// Whether the history keeps no value for it (a settings bundle marks it `IsSecure`).
        public var secure: Bool
    }

    /// One change of the history, as dconf's clients see it.
    public struct Record: Sendable, Hashable {
        /// The history's sequence number of the change (`prefs history` shows it).
        public var sequence: UInt64
        /// When it was committed, in microseconds since 1970-01-01T00:00:00Z.
        public var time: Int64
        /// Who made it, as the history records it (a program's name, an application ID,
        /// `roaming:<machine>`, `managed`, `restore`).
        public var who: String
        /// The dconf keys it changed, in key order.
        public var keys: [Key]
        /// The writer call that made it, when it came through dconf's writer while this prefsd ran.
        public var call: Call?
        /// Whether only some of its keys are told: the history read for `Blame` ended inside it.
        public var cut = false
    }

    /// The most changes `Blame` tells.
    public static let maximumRecords = 64

    /// The records, oldest first.
    public var records: [Record]

    /// The newest ``maximumRecords`` changes of dconf keys among `entries` (history entries,
    /// oldest first): entries of keys the GSettings path rule does not map are left out, and
    /// changes left with none. `oldestCut` says the history holds more entries of the oldest
    /// change than `entries` do (its record then says it is cut). `type` gives the GVariant
    /// type a key was last written with through dconf; `calls` the writer calls that made
    /// changes, by sequence number.
    public init(entries: [HistoryEntry], oldestCut: Bool, type: (DomainName, String) -> String?, calls: [UInt64: Call]) {
        var records: [Record] = []
        for entry in entries {
            guard let path = DconfMirror.path(domain: entry.domain, key: entry.key) else { continue }
            let value = entry.value.flatMap { DconfValue(storedValue: $0, writtenAs: type(entry.domain, entry.key)) }
            if records.last?.sequence != entry.sequence {
                records.append(Record(sequence: entry.sequence, time: entry.time, who: entry.who, keys: [], call: calls[entry.sequence]))
            }
            records[records.count - 1].keys.append(Key(path: path, value: value, secure: entry.secure))
        }
        if oldestCut, let oldest = entries.first?.sequence, records.first?.sequence == oldest { records[0].cut = true }
        self.records = Array(records.suffix(Self.maximumRecords))
    }

    /// The records in words, oldest first, separated as dconf-service separates its own.
    public var text: String {
        records.map(\.text).joined(separator: "\n====================================================================\n")
    }
}

extension DconfBlame.Record {
    /// The record in words: the writer call's lines, when there was one, as dconf-service
    /// writes them, then the history's.
    public var text: String {
        var lines: [String] = []
        if let call {
            lines.append("Sender: \(call.sender)")
            lines.append("Object path: \(call.objectPath)")
            lines.append("Method: \(call.method)")
            lines.append(call.processID.map { "PID: \($0)" } ?? "Unable to acquire PID: the bus did not tell it")
        }
        lines.append("Program: \(who)")
        lines.append("Time: \(Self.utcText(microseconds: time))")
        lines.append("History: change \(sequence)")
        lines.append("Parameters:")
        for key in keys {
            if key.secure {
                lines.append("  \(key.path) changed (its value is not recorded)")
            } else if let value = key.value {
                lines.append("  \(key.path) = \(value.text)")
            } else {
                lines.append("  \(key.path) reset")
            }
        }
        if cut { lines.append("  … more keys of this change are not told: Blame reads only the newest entries of the history") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `microseconds` since 1970-01-01T00:00:00Z as ISO 8601 text in UTC, to the millisecond
    /// (`2026-11-28T15:51:57.123Z`).
    static func utcText(microseconds: Int64) -> String {
        // The history's times are after 1970; a time before it (a clock set wrong) reads as 1970.
        let microseconds = max(0, microseconds)
        var seconds = time_t(microseconds / 1_000_000)
        let milliseconds = Int(microseconds % 1_000_000) / 1_000
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let fraction = String(1_000 + milliseconds).dropFirst()
        return
            "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(fraction)Z"
    }
}
