import Dconf
import GSettingsSchemas
import PreferencesModel

/// How the values of a change meet the installed GSettings schemas (contract, "Schemas").
enum SchemaTyping: Sendable {
    /// Taken as they come, with no type recorded for them: dconf's `Change`, which checks
    /// and types its own values (``DconfRequest``), and a take-in of dconf's database.
    case asGiven
    /// prefsd's own interface: a value a schema key cannot hold refuses the whole change;
    /// one it holds is stored with the key's GVariant type.
    case enforced(SchemaIndex)
    /// A roaming peer's value, and one put back from the history: stored with the schema
    /// key's type when the key holds it, else as it comes (GSettings then reads the
    /// default, and `prefs dconf-check --store` lists it): a value another machine or an
    /// earlier schema allowed never stops a domain from roaming or being restored.
    case fitted(SchemaIndex)
}

extension DomainState {
    /// The GVariant type to store with each value of `set` (of `domain`) that a schema key
    /// holds, under ``schemaTyping``: the key's type, `nil` when it is the value's natural
    /// type (``DconfValue/naturalType(of:)``), so dconf's file gives the value with the
    /// key's type. A domain no schema describes costs one lookup.
    /// - Throws: ``PreferencesServiceError`` `InvalidValue` naming every key whose schema key
    ///   cannot hold its value, when the schemas are enforced.
    func schemaTypes(_ domain: DomainName, set: [String: PropertyListValue]) throws(PreferencesServiceError) -> [String: String?] {
        let (index, enforced): (SchemaIndex, Bool)
        switch schemaTyping {
        case .asGiven: return [:]
        case .enforced(let schemas): (index, enforced) = (schemas, true)
        case .fitted(let schemas): (index, enforced) = (schemas, false)
        }
        guard index.describes(domain.rawValue) else { return [:] }
        var types: [String: String?] = [:]
        var refusals: [String] = []
        for (key, value) in set {
            guard let rule = index.rule(domain: domain.rawValue, key: key) else { continue }
            if rule.holds(value) {
                types[key] = .some(rule.type == DconfValue.naturalType(of: value) ? nil : rule.type)
            } else if enforced, let refusal = rule.refusal(of: value, key: "\(domain) \"\(key)\"", given: Self.shown(value)) {
                refusals.append(refusal.description)
            }
        }
        guard refusals.isEmpty else { throw .invalidValue(refusals.sorted().joined(separator: "; ")) }
        return types
    }

    /// `value` as a refusal shows it: its text on one line, cut after 80 characters.
    private static func shown(_ value: PropertyListValue) -> String {
        let text = value.description
        return text.count > 80 ? String(text.prefix(80)) + "…" : text
    }
}
