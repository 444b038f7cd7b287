import DBus
import PreferencesModel
import PreferencesProtocol
import Synchronization

/// The `Read` replies of stored values, encoded once (``ReplyBody``) and answered again while
/// the value read is the one they were encoded from.
///
/// An entry is used only when the value a `Read` found is byte for byte (``PropertyListValue``'s
/// `==`) the value it was encoded from, so a changed value is never answered from an old
/// encoding, whatever changed it (a write, a removal, a forced key, an administrator's
/// default); a stale entry is replaced by the next `Read` of its key. Holds at most
/// ``maximumEntries`` values of at most ``maximumValueBytes`` each: when full, it starts
/// again empty (the keys read most soon come back).
final class ReadReplies: Sendable {
    /// The most entries kept.
    static let maximumEntries = 4_096
    /// The largest value kept, as marshalled (a larger one is encoded on each `Read`: its
    /// copy would cost about as much as its encoding).
    static let maximumValueBytes = 4_096

    private struct Key: Hashable {
        let domain: DomainName
        let key: String
    }

    private struct Entry {
        let value: PropertyListValue
        let body: ReplyBody
    }

    private let entries = Mutex<[Key: Entry]>([:])

    /// The encoded reply body `(v)` of `value`, read from `key` of `domain`; nil when it
    /// cannot be encoded (the caller builds the reply from values, which reports why).
    func body(domain: DomainName, key: String, value: PropertyListValue) -> ReplyBody? {
        let index = Key(domain: domain, key: key)
        if let entry = entries.withLock({ $0[index] }), entry.value == value { return entry.body }
        guard value.marshalledSize <= Self.maximumValueBytes else { return try? ReplyBody([value.dbusVariant]) }
        guard let body = try? ReplyBody([value.dbusVariant]) else { return nil }
        entries.withLock { entries in
            if entries.count >= Self.maximumEntries, entries[index] == nil { entries.removeAll(keepingCapacity: true) }
            entries[index] = Entry(value: value, body: body)
        }
        return body
    }
}
