import DBus
import PreferencesProtocol

/// `Read`s answered before their call is decoded.
///
/// Most of what a `Read` of a value read before costs in prefsd is taking the call apart:
/// every header string and argument made a Swift value, the call then passed through the
/// caller's admission, the method's lookup and the argument checks, only to find the reply
/// kept in ``ReadReplies``. The quick answer goes straight to that reply when everything
/// those steps would check is known already: the store loaded whole, the sender a host
/// process prefsd has identified (which may read everything), and a reply kept for these
/// very arguments whose value is still the one stored and which fits the bound on replies
/// (`--max-reply-size`). Anything else (a first read, a changed value, a sandboxed or
/// unknown caller, a call while the store loads, a call that wants no reply, a reply over
/// the bound) is decoded and handled as every call is, and gets the answer it always got.
extension PreferencesService {
    /// The kept reply to `call` when it is a `Read` the quick answer may give (see above),
    /// else nil.
    func quickRead(_ call: borrowing IncomingCall) -> ReplyBody? {
        guard call.isCall(member: PreferencesMethod.read.rawValue, interface: PreferencesBus.interface, signature: PreferencesMethod.read.inputSignature),
            loaded.hasLoaded, state.withLock({ $0.ready }),
            let sender = call.sender, gate.isHost(sender),
            let (domainText, keyText) = call.twoStringArguments(),
            let known = readReplies.entry(domain: domainText, key: keyText),
            let value = read({ $0.value(domain: known.domain, key: known.key) }), value == known.value,
            known.body.marshalledSize <= configuration.limits.replyBytes
        else { return nil }
        return known.body
    }
}
