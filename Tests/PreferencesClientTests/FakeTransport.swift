import PreferencesClient

/// A fake transport for the engine: it records the calls the engine asks for and answers
/// them as a test says, as prefsd would (values are plain strings).
struct FakeTransport {
    var engine = ClientEngine<String>()
    /// Every action taken from the engine, oldest first.
    var sent: [ClientAction<String>] = []

    /// Takes the engine's actions, records them and returns them.
    @discardableResult
    mutating func drain() -> [ClientAction<String>] {
        let actions = engine.takeActions()
        sent.append(contentsOf: actions)
        return actions
    }

    /// The tokens of the loads sent, in order.
    var loads: [(ClientDomain, UInt64)] {
        sent.compactMap { if case .load(let domain, let token) = $0 { (domain, token) } else { nil } }
    }

    /// The write calls sent: the keys each set and removed, and its token.
    var applies: [(set: [String: String], remove: [String], token: UInt64)] {
        sent.compactMap { if case .apply(_, let set, let remove, let token) = $0 { (set, remove, token) } else { nil } }
    }

    /// The whole-domain calls sent: the values (`nil`: removal) and the token.
    var replaces: [(values: [String: String]?, token: UInt64)] {
        sent.compactMap { if case .replace(_, let values, let token) = $0 { (values, token) } else { nil } }
    }

    /// The keys of every `changed` news not caused by a write, in order.
    var changedKeys: [String] {
        sent.flatMap { action -> [String] in
            if case .changed(_, let keys, false) = action { return keys }
            return []
        }
    }

    /// Follows `domain` and answers its load with `values` from `sender`.
    mutating func load(_ domain: ClientDomain, _ values: [String: String], serial: UInt32 = 1, sender: String = ":1.1", forced: Set<String> = []) {
        engine.follow(domain)
        drain()
        guard let token = loads.last?.1 else { return }
        engine.loadAnswered(domain, token: token, values: values, forced: forced, serial: serial, sender: sender)
        drain()
    }
}
