import PreferencesModel
import PreferencesStore

extension DomainState {
    /// Records that `batch` is durable: applies it to the committed domains and returns
    /// what changed for readers, or `nil` when nothing did. In a domain an administrator
    /// sets keys in, that is what a read answers: a forced key's stored value is not seen,
    /// and removing the user's value of a key with a default reveals the default.
    mutating func committed(_ batch: Batch) -> Change? {
        let (set, remove) = setsAndRemovals(batch)
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

    /// What `batch` sets, and the keys it removes (a domain removed whole: every key
    /// committed in it), as ``committed(_:)`` applies them.
    private func setsAndRemovals(_ batch: Batch) -> (set: [String: PropertyListValue], remove: [String]) {
        var set: [String: PropertyListValue] = [:]
        var remove: [String] = []
        for mutation in batch.mutations {
            switch mutation {
            case .set(_, let key, let value): set[key] = value
            // A key the store may not hold was never loaded (`leftOut`): removing its row
            // changes nothing readers see.
            case .remove(_, let key): if PreferenceKey.storedKeyProblem(key) == nil { remove.append(key) }
            case .removeDomain: remove.append(contentsOf: (committed[batch.domain] ?? [:]).keys.sorted())
            case .note, .setGVariantType: break
            }
        }
        return (set, remove)
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

extension DomainState {
    /// The change `batch` would make if it were committed now, without committing it: what
    /// ``committed(_:)`` would answer if nothing else committed first. `nil` when it changes
    /// nothing, or when it cannot be told ahead (a domain an administrator sets keys in).
    /// Only a guess to prepare work with: compare it with what ``committed(_:)`` answers.
    func predictedChange(_ batch: Batch) -> Change? {
        guard !isAdministered(batch.domain) else { return nil }
        let entries = committed[batch.domain]
        let (set, remove) = setsAndRemovals(batch)
        // What the batch has written so far, over the committed entries (nil: removed).
        var overlay: [String: PropertyListValue?] = [:]
        func current(_ key: String) -> PropertyListValue? { overlay[key] ?? entries?[key] }
        // In the order `apply` takes them: every set, then every removal.
        var change = Change(domain: batch.domain)
        for (key, value) in set where current(key) != value {
            overlay[key] = .some(value)
            change.changed[key] = value
        }
        for key in remove where current(key) != nil {
            overlay[key] = .some(nil)
            change.removed.append(key)
        }
        return change.isEmpty ? nil : change
    }
}
