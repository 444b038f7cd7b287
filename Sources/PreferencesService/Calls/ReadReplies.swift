import DBus
import PreferencesModel
import PreferencesProtocol
import Synchronization

/// The `Read` replies of stored values, encoded once (``ReplyBody``) and answered again while
/// the value read is the one they were encoded from.
///
/// Entries are found by the call's arguments as sent (the domain and key text), and keep the
/// names those were validated as (``DomainName``, the key in normalization form C): a `Read`
/// of the same text again needs neither check again, as the checks depend on the text only.
/// An entry's reply is used only when the value read now is byte for byte
/// (``PropertyListValue``'s `==`) the value it was encoded from, so a changed value is never
/// answered from an old encoding, whatever changed it (a write, a removal, a forced key, an
/// administrator's default); a stale entry is replaced by the next `Read` of its key. Holds at
/// most ``maximumEntries`` values of at most ``maximumValueBytes`` each: when full, it starts
/// again empty (the keys read most soon come back).
final class ReadReplies: Sendable {
    /// The most entries kept.
    static let maximumEntries = 4_096
    /// The largest value kept, as marshalled (a larger one is answered as any reply is,
    /// built from its values on each `Read`). With
    /// ``maximumEntries``, the kept messages' bodies take at most 4 MiB; the values they keep
    /// share their storage with the stored ones while those are unchanged.
    static let maximumValueBytes = 1_024

    /// A `Read`'s arguments as sent.
    private struct Texts: Hashable {
        let domain: String
        let key: String
    }

    /// What a `Read` of some text was answered with.
    struct Entry: Sendable {
        /// The domain the text named.
        let domain: DomainName
        /// The key the text named, normalized.
        let key: String
        /// The value read.
        let value: PropertyListValue
        /// The reply's body, `(v)` of ``value``.
        let body: ReplyBody
    }

    private let entries = Mutex<[Texts: Entry]>([:])

    /// The entry of a `Read` of `domain` and `key` as sent, when one was kept; its reply may
    /// be answered only while the value stored is still its ``Entry/value``.
    func entry(domain: String, key: String) -> Entry? {
        entries.withLock { $0[Texts(domain: domain, key: key)] }
    }

    /// The encoded reply body `(v)` of `value`, read from `key` of `domain` (the names the
    /// texts `domainText` and `keyText` were validated as), kept for the next `Read` of those
    /// texts, given as `answer` (the reply's arguments, `[value.dbusVariant]`); nil when it is
    /// not kept, larger than ``maximumValueBytes`` or not encodable (the caller builds the
    /// reply from `answer`, as any other, which reports why).
    func body(
        _ answer: [DBusValue], domainText: String, keyText: String, domain: DomainName, key: String, value: PropertyListValue
    ) -> ReplyBody? {
        guard DBusValue.structure(answer).marshalledSize <= Self.maximumValueBytes, let body = try? ReplyBody(answer) else {
            return nil
        }
        let texts = Texts(domain: domainText, key: keyText)
        entries.withLock { entries in
            if entries.count >= Self.maximumEntries, entries[texts] == nil { entries.removeAll(keepingCapacity: true) }
            entries[texts] = Entry(domain: domain, key: key, value: value, body: body)
        }
        return body
    }
}
