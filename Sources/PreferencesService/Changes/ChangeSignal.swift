import DBus
import PreferencesModel
import PreferencesProtocol

extension Change {
    /// The most bytes a `Changed` or `VolatileChanged` body may take marshalled (the
    /// contract's bound): a subscriber that stops reading then costs the bus a few KiB per
    /// change, not the size of every value written.
    static let maximumSignalBytes = 4096

    /// The body of the change's signal, `(s a{sv} as as)`, within `limit` bytes.
    ///
    /// Every value that fits goes in `changed`, smallest first; the keys of the values
    /// left out go in `invalidated`, for subscribers to read again. When even the names
    /// of the changed and removed keys do not fit, `changed` and `removed` are empty and
    /// `invalidated` is the one entry `""`: read the whole domain again.
    func signalBody(limit: Int = maximumSignalBytes) -> [DBusValue] {
        let removed = removed.sorted()
        let whole = body(changed: changed, removed: removed, invalidated: [])
        if Self.size(of: whole) <= limit { return whole }

        var invalidated = Set(changed.keys)
        let namesOnly = body(changed: [:], removed: removed, invalidated: invalidated.sorted())
        var size = Self.size(of: namesOnly)
        guard size <= limit else { return body(changed: [:], removed: [], invalidated: [""]) }

        // Lay values back in, smallest first. An entry starts 8-aligned, so it costs at
        // most its own size plus 7 bytes of padding; leaving its key out of `invalidated`
        // only saves bytes, so the running total never underestimates.
        let candidates =
            changed
            .map { (key: $0.key, value: $0.value, cost: Self.entry($0.key, $0.value).marshalledSize + 7) }
            .sorted { ($0.cost, $0.key) < ($1.cost, $1.key) }
        var kept: [String: PropertyListValue] = [:]
        for candidate in candidates {
            guard size + candidate.cost <= limit else { break }
            size += candidate.cost
            kept[candidate.key] = candidate.value
            invalidated.remove(candidate.key)
        }
        return body(changed: kept, removed: removed, invalidated: invalidated.sorted())
    }

    private func body(changed: [String: PropertyListValue], removed: [String], invalidated: [String]) -> [DBusValue] {
        [
            .string(domain.rawValue),
            .array(element: .stringVariantEntry, changed.sorted { $0.key < $1.key }.map { Self.entry($0.key, $0.value) }),
            .stringArray(removed),
            .stringArray(invalidated),
        ]
    }

    private static func entry(_ key: String, _ value: PropertyListValue) -> DBusValue {
        .dictEntry(.string(key), value.dbusVariant)
    }

    /// The marshalled size of a message body.
    private static func size(of body: [DBusValue]) -> Int {
        DBusValue.structure(body).marshalledSize
    }
}
