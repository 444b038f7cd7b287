import DBus
import Dconf
import Dispatch
import Logging
import PreferencesModel
import PreferencesProtocol
import PreferencesStore
import Synchronization

/// The preferences interface's methods: each call's arguments checked, and what it reads or
/// changes.
extension PreferencesService {
    func handlePreferencesCall(_ call: DBusMessage, as caller: CallerIdentity) {
        guard let member = call.member, let method = PreferencesMethod(rawValue: member) else {
            return reply(
                to: call, error: StandardErrorName.unknownMethod,
                "\(PreferencesBus.interface) has no method \(call.member ?? "(none)")")
        }
        guard call.hasSignature(method.inputSignature) else {
            return reply(
                to: call, error: StandardErrorName.invalidArgs,
                "\(member) takes arguments of type (\(method.inputSignature)), not (\(call.signature))")
        }
        do {
            let arguments = Arguments(body: try caller.admit(method, call.body), limits: configuration.limits)
            try prepare(method, arguments)
            switch try perform(method, arguments, as: caller) {
            case .answer(let body): reply(to: call, caller.filter(method, answer: body))
            case .encodedAnswer(let body): reply(to: call, body)
            case .effect(let effect, let store, let answer):
                complete(effect, store: store, for: call, answer: answer, who: gate.who(call, as: caller))
            case .revert(let request, let store): revert(request, store: store, for: call, as: caller)
            case .history(let request, let store): history(request, store: store, for: call)
            }
        } catch {
            reply(to: call, error: error.busErrorName, error.description)
        }
        // A load (of the host's) was answered: its snapshot is kept, off the reply path.
        if method == .readDomain, case .host = caller, let snapshots, case .string(let domain)? = call.body.first {
            snapshots.loaded(domain)
        }
    }

    /// What a load of `name` answers (`ReadDomain`'s values, none for a domain that does not
    /// exist, and `ForcedKeys`), as a snapshot's body `(s a{sv} as)`; `nil` when a reply
    /// could not carry it.
    func snapshotBody(_ name: String) -> [DBusValue]? {
        guard let domain = try? DomainName(name), (try? ensureLoaded([domain])) != nil else { return nil }
        let (entries, forced) = read { ($0.entries(domain: domain) ?? [:], $0.forcedKeys(domain: domain)) }
        let body: [DBusValue] = [.string(name), PropertyListValue.dictionary(entries).dbusValue, .stringArray(forced)]
        guard DBusValue.structure(body).marshalledSize <= configuration.limits.replyBytes else { return nil }
        return body
    }

    enum Outcome: Sendable {
        /// Answer at once with this body.
        case answer([DBusValue])
        /// Answer at once with this body, encoded already (no filter applies to it).
        case encodedAnswer(ReplyBody)
        /// Carry out the effect, then answer with the body.
        case effect(Effect, DomainStore, answer: [DBusValue])
        /// Put a domain back as the journal says it was (`RevertTo`, `RevertKeyTo`).
        case revert(RevertRequest, DomainStore)
        /// Read the journal off the connection's queue and answer from there (`History`).
        case history(HistoryRequest, DomainStore)
    }

    func perform(_ method: PreferencesMethod, _ arguments: Arguments, as caller: CallerIdentity) throws(PreferencesServiceError) -> Outcome {
        // A sandboxed application's changes are held to its own share of the limits too.
        let application: String? = if case .application(let id) = caller { id } else { nil }
        func change(
            answer: [DBusValue] = [], otherwise: [DBusValue] = [], _ body: (inout DomainState) throws -> Effect?
        ) throws(PreferencesServiceError) -> Outcome {
            try self.change(as: application, typing: .enforced(schemas.current), answer: answer, otherwise: otherwise, body)
        }
        switch method {
        case .read:
            // Read before with these very arguments: the names were checked then, and the
            // reply encoded then serves while the value stored is the same.
            let (domainText, keyText) = (try arguments.string(0), try arguments.string(1))
            if let known = readReplies.entry(domain: domainText, key: keyText),
                let value = read({ $0.value(domain: known.domain, key: known.key) }), value == known.value
            {
                return .encodedAnswer(known.body)
            }
            let (domain, key) = (try arguments.domain(0), try arguments.key(1))
            guard let value = read({ $0.value(domain: domain, key: key) }) else {
                if read({ $0.isLeftOut(domain: domain, key: key) }) {
                    throw .invalidValue(
                        "the value stored for \(domain) \"\(key)\" cannot be read: it breaks the store's rules (an older prefsd stored it, or the store was changed by hand) and was left out at start; remove it with `prefs delete \(domain) \(key)`"
                    )
                }
                throw .notFound("\(domain) has no key \"\(key)\"")
            }
            let answer = [value.dbusVariant]
            guard let body = readReplies.body(answer, domainText: domainText, keyText: keyText, domain: domain, key: key, value: value)
            else { return .answer(answer) }
            return .encodedAnswer(body)
        case .readDomain:
            let domain = try arguments.domain(0)
            guard let entries = read({ $0.entries(domain: domain) }) else {
                throw .notFound("there is no persistent domain \(domain)")
            }
            return .answer([PropertyListValue.dictionary(entries).dbusValue])
        case .readVolatileDomain:
            let domain = try arguments.domain(0)
            guard let entries = read({ $0.volatileEntries(domain: domain) }) else {
                throw .notFound("there is no volatile domain \(domain)")
            }
            return .answer([PropertyListValue.dictionary(entries).dbusValue])
        case .domains:
            return .answer([.stringArray(read(\.persistentDomainNamesUnsorted).sorted().map(\.rawValue))])
        case .volatileDomains:
            return .answer([.stringArray(read(\.volatileDomainNamesUnsorted).sorted().map(\.rawValue))])
        case .administeredDomains:
            return .answer([.stringArray(read(\.administeredDomainNamesUnsorted).sorted().map(\.rawValue))])
        case .administratorDefaults:
            let domain = try arguments.domain(0)
            return .answer([PropertyListValue.dictionary(read { $0.administratorDefaults(domain: domain) }).dbusValue])
        case .forcedKeys:
            let domain = try arguments.domain(0)
            return .answer([.stringArray(read { $0.forcedKeys(domain: domain) })])
        case .isForced:
            let (domain, key) = (try arguments.domain(0), try arguments.key(1))
            return .answer([.boolean(read { $0.isForced(domain: domain, key: key) })])
        case .lookup:
            let (searchList, key) = (try arguments.domains(0), try arguments.key(1))
            guard let (domain, value) = read({ $0.lookup(searchList: searchList, key: key) }) else {
                throw .notFound("no domain of the search list has the key \"\(key)\"")
            }
            return .answer([.string(domain.rawValue), value.dbusVariant])
        case .write:
            let (domain, key, value) = (try arguments.domain(0), try arguments.key(1), try arguments.value(2))
            return try change { try $0.write(domain: domain, key: key, value: value) }
        case .remove:
            let (domain, key) = (try arguments.domain(0), try arguments.key(1))
            return try change { try $0.remove(domain: domain, key: key) }
        case .apply:
            let (domain, set, remove) = (try arguments.domain(0), try arguments.values(1), try arguments.keys(2))
            return try change { try $0.apply(domain: domain, set: set, remove: remove) }
        case .applyIf:
            let (domain, expected, absent) = (try arguments.domain(0), try arguments.values(1), try arguments.keys(2))
            let (set, remove) = (try arguments.values(3), try arguments.keys(4))
            return try change(answer: [.boolean(true)], otherwise: [.boolean(false)]) {
                try $0.applyIf(domain: domain, expected: expected, absent: absent, set: set, remove: remove)
            }
        case .replaceDomain:
            let (domain, values) = (try arguments.domain(0), try arguments.values(1))
            return try change { try $0.replaceDomain(domain, with: values) }
        case .removeDomain:
            let domain = try arguments.domain(0)
            return try change { try $0.removeDomain(domain) }
        case .setVolatileDomain:
            let (domain, values) = (try arguments.domain(0), try arguments.values(1))
            return try change { try $0.setVolatileDomain(domain, values: values) }
        case .removeVolatileDomain:
            let domain = try arguments.domain(0)
            return try change { $0.removeVolatileDomain(domain) }
        case .history:
            // A domain of "" asks for every domain's history (the host's callers only).
            let (domainText, keyText) = (try arguments.string(0), try arguments.string(1))
            let domain = domainText.isEmpty ? nil : try arguments.domain(0)
            let key = keyText.isEmpty ? nil : try arguments.key(1)
            let (after, limit) = (try arguments.uint64(2), try arguments.uint32(3))
            return .history(HistoryRequest(domain: domain, key: key, after: after, limit: limit), store())
        case .recentHistory:
            let (domainText, keyText) = (try arguments.string(0), try arguments.string(1))
            let domain = domainText.isEmpty ? nil : try arguments.domain(0)
            let key = keyText.isEmpty ? nil : try arguments.key(1)
            let request = HistoryRequest(domain: domain, key: key, after: 0, limit: try arguments.uint32(2), newest: true)
            return .history(request, store())
        case .revertTo:
            let (domain, sequence) = (try arguments.domain(0), try arguments.uint64(1))
            return .revert(RevertRequest(domain: domain, key: nil, sequence: sequence), store())
        case .revertKeyTo:
            let (domain, key, sequence) = (try arguments.domain(0), try arguments.key(1), try arguments.uint64(2))
            return .revert(RevertRequest(domain: domain, key: key, sequence: sequence), store())
        }
    }
}
