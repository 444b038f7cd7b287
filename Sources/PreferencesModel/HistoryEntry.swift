/// One key's change, as prefsd's change journal keeps it.
public struct HistoryEntry: Sendable, Hashable {
    /// The change's sequence number: increasing, never reused. Every key of one atomic
    /// change carries the same number.
    public var sequence: UInt64
    /// When the change was committed, in microseconds since 1970-01-01T00:00:00Z.
    public var time: Int64
    /// The domain changed.
    public var domain: DomainName
    /// The key changed.
    public var key: String
    /// Who made the change: an application ID, a program's name, `managed` or `restore`.
    public var who: String
    /// The new value, or `nil` when the key was removed.
    public var value: PropertyListValue?
    /// The value before, or `nil` when the key was absent.
    public var previous: PropertyListValue?
    /// Whether the key is one a settings bundle marks `IsSecure`: the change is recorded
    /// without its values (`value` and `previous` are then `nil`, and no removal is meant).
    public var secure: Bool

    /// Makes an entry.
    public init(
        sequence: UInt64, time: Int64, domain: DomainName, key: String, who: String,
        value: PropertyListValue?, previous: PropertyListValue?, secure: Bool = false
    ) {
        self.secure = secure
        self.sequence = sequence
        self.time = time
        self.domain = domain
        self.key = key
        self.who = who
        self.value = value
        self.previous = previous
    }
}
