import DBus
import PreferencesModel
import PreferencesProtocol

/// One request per method and property of `io.github.prefsd.Preferences1`, named after
/// the member, with the arguments the Introspection XML gives (a test holds them against
/// the XML). Domain names and keys are passed as they are: the service validates them.
public enum PreferencesCall {
    /// `Read(s domain, s key) -> v`: the key's value (a forced key gives the forced value).
    public static func read(_ domain: String, _ key: String) -> PreferencesRequest<PropertyListValue> {
        PreferencesRequest(member: PreferencesMethod.read.rawValue, [.string(domain), .string(key)], reply: "v") { body throws(PreferencesProxyError) in
            try ReplyValues.value(body[0])
        }
    }

    /// `Write(s domain, s key, v value)`: answered once the write is durable.
    public static func write(_ domain: String, _ key: String, _ value: PropertyListValue) -> PreferencesRequest<Void> {
        none(.write, [.string(domain), .string(key), value.dbusVariant])
    }

    /// `Remove(s domain, s key)`: an absent key is no error.
    public static func remove(_ domain: String, _ key: String) -> PreferencesRequest<Void> {
        none(.remove, [.string(domain), .string(key)])
    }

    /// `Domains() -> as`: the persistent domains, sorted.
    public static func domains() -> PreferencesRequest<[String]> {
        strings(.domains, [])
    }

    /// `ReadDomain(s domain) -> a{sv}`: a whole persistent domain (`NotFound` when none).
    public static func readDomain(_ domain: String) -> PreferencesRequest<[String: PropertyListValue]> {
        dictionary(.readDomain, [.string(domain)])
    }

    /// `Apply(s domain, a{sv} set, as remove)`: one atomic commit.
    public static func apply(_ domain: String, set: [String: PropertyListValue], remove: [String]) -> PreferencesRequest<Void> {
        none(.apply, [.string(domain), ReplyValues.dictionaryArgument(set), .stringArray(remove)])
    }

    /// `ReplaceDomain(s domain, a{sv} values)`: the domain holds exactly `values` afterwards.
    public static func replaceDomain(_ domain: String, _ values: [String: PropertyListValue]) -> PreferencesRequest<Void> {
        none(.replaceDomain, [.string(domain), ReplyValues.dictionaryArgument(values)])
    }

    /// `RemoveDomain(s domain)`: removes a persistent domain (absent: no error).
    public static func removeDomain(_ domain: String) -> PreferencesRequest<Void> {
        none(.removeDomain, [.string(domain)])
    }

    /// `VolatileDomains() -> as`: the volatile domains, sorted.
    public static func volatileDomains() -> PreferencesRequest<[String]> {
        strings(.volatileDomains, [])
    }

    /// `SetVolatileDomain(s domain, a{sv} values)`: creates a volatile domain (`Exists` when
    /// a volatile domain of that name exists).
    public static func setVolatileDomain(_ domain: String, _ values: [String: PropertyListValue]) -> PreferencesRequest<Void> {
        none(.setVolatileDomain, [.string(domain), ReplyValues.dictionaryArgument(values)])
    }

    /// `RemoveVolatileDomain(s domain)`: drops a volatile domain (absent: no error).
    public static func removeVolatileDomain(_ domain: String) -> PreferencesRequest<Void> {
        none(.removeVolatileDomain, [.string(domain)])
    }

    /// `IsForced(s domain, s key) -> b`: whether an administrator forces the key.
    public static func isForced(_ domain: String, _ key: String) -> PreferencesRequest<Bool> {
        PreferencesRequest(member: PreferencesMethod.isForced.rawValue, [.string(domain), .string(key)], reply: "b") { body in
            body[0] == .boolean(true)
        }
    }

    /// `ForcedKeys(s domain) -> as`: the keys an administrator forces in the domain.
    public static func forcedKeys(_ domain: String) -> PreferencesRequest<[String]> {
        strings(.forcedKeys, [.string(domain)])
    }

    /// `Lookup(as search_list, s key) -> (s domain, v value)`: the first persistent domain
    /// of the list that has the key (`NotFound` when none).
    public static func lookup(_ searchList: [String], _ key: String) -> PreferencesRequest<PreferencesLookup> {
        PreferencesRequest(member: PreferencesMethod.lookup.rawValue, [.stringArray(searchList), .string(key)], reply: "sv") {
            body throws(PreferencesProxyError) in
            PreferencesLookup(domain: body[0].stringValue ?? "", value: try ReplyValues.value(body[1]))
        }
    }

    /// `History(s domain, s key, t after, u limit) -> a(txsssbvbv)`: the change journal's
    /// entries of `domain` (of `key` only, unless it is `""`) with a sequence above
    /// `after`, oldest first, at most `limit` (0: as many as one reply carries).
    public static func history(_ domain: String, key: String = "", after: UInt64 = 0, limit: UInt32 = 0) -> PreferencesRequest<[HistoryEntry]> {
        historyRequest(.history, [.string(domain), .string(key), .uint64(after), .uint32(limit)])
    }

    /// `RecentHistory(s domain, s key, u limit) -> a(txsssbvbv)` (beyond the contract): the
    /// newest `limit` entries of `domain` (of `key` only, unless it is `""`; every domain
    /// for `""`), oldest first; 0 asks for as many as one reply carries. Its cost does not
    /// grow with the journal, as reading the whole of it with `History` does.
    public static func recentHistory(_ domain: String, key: String = "", limit: UInt32) -> PreferencesRequest<[HistoryEntry]> {
        historyRequest(.recentHistory, [.string(domain), .string(key), .uint32(limit)])
    }

    private static func historyRequest(_ method: PreferencesMethod, _ arguments: [DBusValue]) -> PreferencesRequest<[HistoryEntry]> {
        PreferencesRequest(member: method.rawValue, arguments, reply: "a" + HistoryEntry.dbusSignature.rawValue) { body throws(PreferencesProxyError) in
            guard case .array(_, let items) = body[0] else { throw .unexpectedReply("\(method.rawValue) did not answer an array") }
            var entries: [HistoryEntry] = []
            for item in items {
                guard let entry = HistoryEntry(dbus: item) else {
                    throw .unexpectedReply("\(method.rawValue) answered an entry prefsd's client cannot read: \(item.signature.rawValue)")
                }
                entries.append(entry)
            }
            return entries
        }
    }

    /// `RevertTo(s domain, t sequence)`: puts the domain back as it was right after change
    /// `sequence` (0: before every recorded change), as one change made by `restore`.
    public static func revertTo(_ domain: String, sequence: UInt64) -> PreferencesRequest<Void> {
        none(.revertTo, [.string(domain), .uint64(sequence)])
    }

    /// `RevertKeyTo(s domain, s key, t sequence)`: puts one key back as it was right after
    /// change `sequence`, as one change made by `restore`.
    public static func revertKeyTo(_ domain: String, key: String, sequence: UInt64) -> PreferencesRequest<Void> {
        none(.revertKeyTo, [.string(domain), .string(key), .uint64(sequence)])
    }

    /// The `Version` property (`org.freedesktop.DBus.Properties.Get`): the service's
    /// version, like `0.3.0`.
    public static func version() -> PreferencesRequest<String> {
        PreferencesRequest(
            interface: StandardInterface.properties, member: "Get",
            [.string(PreferencesBus.interface), .string(PreferencesBus.versionProperty)], reply: "v"
        ) { body throws(PreferencesProxyError) in
            guard case .variant(.string(let version)) = body[0] else {
                throw .unexpectedReply("the Version property is \(body[0].variantValue?.signature.rawValue ?? "?"), not a string")
            }
            return version
        }
    }

    // MARK: Shapes of replies

    static func none(_ method: PreferencesMethod, _ arguments: [DBusValue]) -> PreferencesRequest<Void> {
        PreferencesRequest(member: method.rawValue, arguments, reply: "") { _ in () }
    }

    static func strings(_ method: PreferencesMethod, _ arguments: [DBusValue]) -> PreferencesRequest<[String]> {
        PreferencesRequest(member: method.rawValue, arguments, reply: "as") { body in ReplyValues.strings(body[0]) }
    }

    static func dictionary(_ method: PreferencesMethod, _ arguments: [DBusValue]) -> PreferencesRequest<[String: PropertyListValue]> {
        PreferencesRequest(member: method.rawValue, arguments, reply: "a{sv}") { body throws(PreferencesProxyError) in
            try ReplyValues.dictionary(body[0])
        }
    }
}
