import PreferencesModel
import PreferencesStore

extension DomainState {
    /// Records that `batch` is durable: applies it to the committed domains and returns
    /// what changed for readers, or `nil` when nothing did. In a domain an administrator
    /// sets keys in, that is what a read answers: a forced key's stored value is not seen,
    /// and removing the user's value of a key with a default reveals the default.
    mutating func committed(_ batch: Batch) -> Change? {
        var set: [String: PropertyListValue] = [:]
        var remove: [String] = []
        for mutation in batch.mutations {
            switch mutation {
            case .set(_, let key, let value): set[key] = value
            case .remove(_, let key): remove.append(key)
            case .removeDomain: remove.append(contentsOf: (committed[batch.domain] ?? [:]).keys.sorted())
            case .note: break
            }
        }
        var before: [String: PropertyListValue] = [:]
        let administered = isAdministered(batch.domain)
        if administered {
            for key in set.keys { before[key] = value(domain: batch.domain, key: key) }
            for key in remove { before[key] = value(domain: batch.domain, key: key) }
        }
        let change = Self.apply(set: set, remove: remove, to: &committed[batch.domain, default: [:]], domain: batch.domain)
        if committed[batch.domain]?.isEmpty == true { committed[batch.domain] = nil }
        settle(batch)
        return change.map { administered ? visible($0, before: before) : $0 }
    }

    /// Records that `batch` failed: drops what it staged and recounts the domain.
    mutating func failed(_ batch: Batch) {
        let (oldBytes, oldKeys) = (domainBytes[batch.domain] ?? 0, domainKeys[batch.domain] ?? 0)
        settle(batch)
        let entries = projectedEntries(domain: batch.domain)
        let bytes = entries.isEmpty ? 0 : Self.bytes(of: entries, domain: batch.domain)
        storeBytes += bytes - oldBytes
        persistentDomainCount += (entries.isEmpty ? 0 : 1) - (oldKeys == 0 ? 0 : 1)
        account(batch.domain, bytes: bytes - oldBytes, domains: (entries.isEmpty ? 0 : 1) - (oldKeys == 0 ? 0 : 1), volatile: false)
        domainBytes[batch.domain] = entries.isEmpty ? nil : bytes
        domainKeys[batch.domain] = entries.isEmpty ? nil : entries.count
    }

    /// Drops the staged entries whose newest writer is `batch`.
    private mutating func settle(_ batch: Batch) {
        batchesInFlight -= 1
        guard var entries = staged[batch.domain] else { return }
        entries = entries.filter { $0.value.sequence != batch.sequence }
        staged[batch.domain] = entries.isEmpty ? nil : entries
        if committed[batch.domain] == nil && staged[batch.domain] == nil {
            domainBytes[batch.domain] = nil
            domainKeys[batch.domain] = nil
        }
    }
}
