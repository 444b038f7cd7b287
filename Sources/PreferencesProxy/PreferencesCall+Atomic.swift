import DBus
import PreferencesModel
import PreferencesProtocol

extension PreferencesCall {
    /// `ReadVolatileDomain(s domain) -> a{sv}`: a whole volatile domain (`NotFound` when none).
    public static func readVolatileDomain(_ domain: String) -> PreferencesRequest<[String: PropertyListValue]> {
        dictionary(.readVolatileDomain, [.string(domain)])
    }

    /// `ApplyIf(s domain, a{sv} expected, as absent, a{sv} set, as remove) -> b applied`:
    /// applies the batch like `Apply` only when every key of `expected` has exactly that
    /// value and every key of `absent` is absent; otherwise changes nothing and answers false.
    public static func applyIf(
        _ domain: String, expected: [String: PropertyListValue], absent: [String],
        set: [String: PropertyListValue], remove: [String]
    ) -> PreferencesRequest<Bool> {
        PreferencesRequest(
            member: PreferencesMethod.applyIf.rawValue,
            [
                .string(domain), ReplyValues.dictionaryArgument(expected), .stringArray(absent),
                ReplyValues.dictionaryArgument(set), .stringArray(remove),
            ],
            reply: "b"
        ) { body in body[0] == .boolean(true) }
    }
}
