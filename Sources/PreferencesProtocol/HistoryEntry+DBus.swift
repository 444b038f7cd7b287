import DBus
import PreferencesModel

extension HistoryEntry {
    /// The type of one entry in a `History` reply: `(txsssbvbv)` — sequence, time (µs
    /// since 1970-01-01T00:00:00Z), domain, key, who, removed, the new value (`""` when
    /// removed), whether there was a previous value, the previous value (`""` when none).
    /// The change of a key a settings bundle marks `IsSecure` is sent without its values:
    /// removed and had-previous false, both values an empty type signature (`g`, which no
    /// property-list value is).
    public static let dbusSignature: DBusSignature = "(txsssbvbv)"

    /// The entry as a `History` reply carries it.
    public var dbusValue: DBusValue {
        if secure {
            return .structure([
                .uint64(sequence), .int64(time), .string(domain.rawValue), .string(key), .string(who),
                .boolean(false), .variant(.signature("")), .boolean(false), .variant(.signature("")),
            ])
        }
        return .structure([
            .uint64(sequence), .int64(time), .string(domain.rawValue), .string(key), .string(who),
            .boolean(value == nil), value?.dbusVariant ?? .variant(.string("")),
            .boolean(previous != nil), previous?.dbusVariant ?? .variant(.string("")),
        ])
    }

    /// Reads one entry of a `History` reply; `nil` when it is not of ``dbusSignature``.
    public init?(dbus value: DBusValue) {
        guard case .structure(let fields) = value, fields.count == 9,
            case .uint64(let sequence) = fields[0], case .int64(let time) = fields[1],
            case .string(let domainName) = fields[2], let domain = try? DomainName(domainName),
            case .string(let key) = fields[3], case .string(let who) = fields[4],
            case .boolean(let removed) = fields[5], case .variant(let newValue) = fields[6],
            case .boolean(let hadPrevious) = fields[7], case .variant(let oldValue) = fields[8]
        else { return nil }
        if !removed, !hadPrevious, case .signature = newValue {
            self.init(sequence: sequence, time: time, domain: domain, key: key, who: who, value: nil, previous: nil, secure: true)
            return
        }
        var decoded: PropertyListValue?
        var previous: PropertyListValue?
        if !removed {
            guard let value = try? PropertyListValue(dbus: newValue) else { return nil }
            decoded = value
        }
        if hadPrevious {
            guard let value = try? PropertyListValue(dbus: oldValue) else { return nil }
            previous = value
        }
        self.init(sequence: sequence, time: time, domain: domain, key: key, who: who, value: decoded, previous: previous)
    }
}
