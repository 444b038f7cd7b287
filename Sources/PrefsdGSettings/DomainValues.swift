import PreferencesModel

/// What the backend knows of one prefsd domain: each key's confirmed value (or its
/// removal) stamped with the serial of the prefsd message that told it, so that a signal
/// older than an answer already applied never overwrites it, and the keys an
/// administrator forces.
struct DomainValues: Sendable {
    /// A confirmed value (`nil`: removed) and the serial of the message that carried it.
    struct Stamped: Sendable {
        var value: PropertyListValue?
        var serial: UInt32
    }

    private(set) var entries: [String: Stamped] = [:]
    /// The keys an administrator forces, and the serial of the message that told them.
    private(set) var forced: Set<String> = []
    private var forcedSerial: UInt32 = 0

    /// The confirmed value of `key`.
    func value(_ key: String) -> PropertyListValue? {
        entries[key]?.value
    }

    /// Records `value` (`nil`: removed) for `key` as of `serial`, unless a newer message
    /// already told it; returns whether it was recorded.
    @discardableResult
    mutating func record(_ key: String, _ value: PropertyListValue?, serial: UInt32) -> Bool {
        if let known = entries[key], known.serial > serial { return false }
        entries[key] = Stamped(value: value, serial: serial)
        return true
    }

    /// Records a whole-domain snapshot as of `serial`: its keys, and the removal of every
    /// other key known; returns the keys whose value may have changed.
    mutating func recordSnapshot(_ values: [String: PropertyListValue], serial: UInt32) -> Set<String> {
        var touched = Set<String>()
        for (key, value) in values where record(key, value, serial: serial) { touched.insert(key) }
        for key in entries.keys where values[key] == nil && entries[key]?.value != nil {
            if record(key, nil, serial: serial) { touched.insert(key) }
        }
        return touched
    }

    /// Records the forced keys as of `serial`, unless a newer message already told them;
    /// returns the keys whose forcing changed.
    mutating func recordForced(_ keys: Set<String>, serial: UInt32) -> Set<String> {
        guard serial >= forcedSerial else { return [] }
        let changed = forced.symmetricDifference(keys)
        forced = keys
        forcedSerial = serial
        return changed
    }

    /// Forgets the serials (a new prefsd numbers its messages from 1 again).
    mutating func resetSerials() {
        for key in entries.keys { entries[key]?.serial = 0 }
        forcedSerial = 0
    }
}
