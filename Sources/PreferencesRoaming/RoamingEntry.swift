import PreferencesModel

/// Names one key of one domain.
///
/// Two keys are the same only when their bytes are: NFC `é` and NFD `é` are two keys, as
/// they are two rows in the store (Swift's `==` and hashing of `String` would make them
/// one by canonical equivalence, so a dictionary of keys would fold one into the other).
public struct RoamingKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The domain.
    public var domain: DomainName
    /// The key.
    public var key: String

    /// Makes a key.
    public init(_ domain: DomainName, _ key: String) {
        self.domain = domain
        self.key = key
    }

    public static func == (lhs: RoamingKey, rhs: RoamingKey) -> Bool {
        lhs.domain == rhs.domain && lhs.key.utf8.elementsEqual(rhs.key.utf8)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(domain)
        hasher.combine(key.utf8.count)
        if key.utf8.withContiguousStorageIfAvailable({ hasher.combine(bytes: UnsafeRawBufferPointer($0)) }) == nil {
            for byte in key.utf8 { hasher.combine(byte) }
        }
    }

    public static func < (lhs: RoamingKey, rhs: RoamingKey) -> Bool {
        if lhs.domain != rhs.domain { return lhs.domain.rawValue < rhs.domain.rawValue }
        return lhs.key.utf8.lexicographicallyPrecedes(rhs.key.utf8)
    }

    public var description: String { "\(domain) \"\(key)\"" }
}

/// When, and on which machine, a change was made: the order in which changes win.
/// The later time wins; of two changes at the same time, the one of the greater machine
/// identity (compared as text). Two changes with one stamp are ordered by their values
/// (``RoamingEntry/supersedes(_:)``).
public struct RoamingStamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The hybrid logical clock time of the change.
    public var time: HybridTime
    /// The machine that made it.
    public var machine: MachineID

    /// Makes a stamp.
    public init(time: HybridTime, machine: MachineID) {
        self.time = time
        self.machine = machine
    }

    public static func < (lhs: RoamingStamp, rhs: RoamingStamp) -> Bool {
        if lhs.time != rhs.time { return lhs.time < rhs.time }
        return lhs.machine < rhs.machine
    }

    public var description: String { "\(time)@\(machine.rawValue.prefix(8))" }
}

/// One change of one key as a machine wrote it in its file: the new value, or `nil` for a
/// removal (a tombstone), and its stamp.
public struct RoamingEntry: Sendable, Equatable {
    /// The key that changed.
    public var key: RoamingKey
    /// The new value, or `nil` when the key was removed.
    public var value: PropertyListValue?
    /// When and where.
    public var stamp: RoamingStamp

    /// Makes an entry.
    public init(key: RoamingKey, value: PropertyListValue?, stamp: RoamingStamp) {
        self.key = key
        self.value = value
        self.stamp = stamp
    }

    /// Whether the entry removes its key.
    public var isTombstone: Bool { value == nil }

    /// Whether this change wins over `other` (of the same key): the one with the greater
    /// stamp; of two with the same stamp but different values (one machine's file holding
    /// both, or two versions of it that disagree), the one whose value's encoding is greater
    /// by its bytes, a removal counting as the least. So which of them was read first never
    /// decides.
    public func supersedes(_ other: RoamingEntry) -> Bool {
        if stamp != other.stamp { return stamp > other.stamp }
        guard let value else { return false }
        guard let theirs = other.value else { return true }
        return value != theirs && theirs.encoded().lexicographicallyPrecedes(value.encoded())
    }
}

extension Sequence where Element == RoamingEntry {
    /// The winning entry of each key (see ``RoamingEntry/supersedes(_:)``). The same entries
    /// in any order, any number of times, give the same answer.
    public func winners() -> [RoamingKey: RoamingEntry] {
        var best: [RoamingKey: RoamingEntry] = [:]
        for entry in self {
            if let current = best[entry.key], !entry.supersedes(current) { continue }
            best[entry.key] = entry
        }
        return best
    }
}
