import PreferencesModel

/// What xfconf's reads answer: the values as they will be once every change accepted is
/// durable. libxfconf sends `SetProperty` without waiting for its answer and may read the
/// channel right after (xfconfd answers from memory at once), so a read that comes after a
/// change on the same connection must see it, though the change may still be on its way to
/// disk.
extension DomainState {
    /// What a read of `key` answers once every staged batch is durable: forced, else the
    /// user's value, else the administrator's default.
    func projectedValue(domain: DomainName, key: String) -> PropertyListValue? {
        if let value = forced[domain]?[key] { return value }
        if let lock = administrator.locks[domain]?[key] { return lock.value }
        return projectedVisible(domain: domain, key: key)
    }

    /// Every key of `domain` as a read answers once every staged batch is durable.
    func projectedReaderEntries(domain: DomainName) -> [String: PropertyListValue] {
        var entries = self.entries(domain: domain) ?? [:]
        for key in (staged[domain] ?? [:]).keys { entries[key] = projectedValue(domain: domain, key: key) }
        return entries
    }
}
