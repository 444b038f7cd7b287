/// The rules every key and value obeys that enters the store, whatever its source: a call
/// on the bus, another machine's roaming file, an administrator's managed or defaults file,
/// an import, a restore from history.
///
/// They are what the bus can carry back: a value stored must be readable by every client,
/// sent in every `Changed` signal and every `History` reply. The bus's decoder keeps out
/// most of it by itself (D-Bus strings hold no NUL), but input that never crossed the bus
/// does not get that check, so the store applies these rules to every batch it is given
/// (``PreferenceKey/storedKeyProblem(_:)`` and ``PropertyListValue/storeProblem``), and
/// every other source applies them first to name what it refuses.
///
/// - Keys: 1–1024 bytes of UTF-8, no NUL, in Unicode normalization form C compared byte for
///   byte (Swift's `==` on `String` is canonical equivalence, under which a decomposed key
///   equals its composed form, so two rows could hold one key).
/// - Strings, and the keys of dictionaries inside values: no NUL.
/// - Dates: a finite number of seconds.
/// - Nesting: at most ``PropertyListValue/maximumContainerNesting`` containers, so that the
///   value still fits in a signal.
extension PreferenceKey {
    /// What keeps `key` out of the store, or `nil` when it may be stored: the rules of
    /// ``problem(with:)``, and Unicode normalization form C byte for byte.
    public static func storedKeyProblem(_ key: String) -> String? {
        if let problem = problem(with: key) { return problem }
        if !normalized(key).utf8.elementsEqual(key.utf8) { return "it is not in Unicode normalization form C" }
        return nil
    }
}

extension PropertyListValue {
    /// The most containers a stored value's wire form may nest (see ``containerNesting``):
    /// 64, the bus's limit, less the two containers of a `Changed` signal's `a{sv}`. That is
    /// 30 nested arrays or 20 nested dictionaries.
    public static let maximumContainerNesting = 62

    /// How many containers the value's wire form nests (its own variant included): 1 for a
    /// scalar, 2 for a date or data, 2 more for each array level (`a`, `v`), 3 more for each
    /// dictionary level (`a`, `{`, `v`).
    public var containerNesting: Int {
        switch self {
        case .array(let items): 2 + (items.lazy.map(\.containerNesting).max() ?? 0)
        case .dictionary(let entries): 3 + (entries.values.lazy.map(\.containerNesting).max() ?? 0)
        case .date, .data: 2
        default: 1
        }
    }

    /// What keeps the value out of the store, or `nil` when it may be stored (see
    /// `StoreRules.swift`): a string or dictionary key holding a NUL, a date that is not a
    /// finite number, or nesting past ``maximumContainerNesting``.
    public var storeProblem: String? {
        if containerNesting > Self.maximumContainerNesting {
            return "it nests too deeply to be sent back on the bus (D-Bus allows 64 containers): use at most 30 nested arrays or 20 nested dictionaries"
        }
        return contentProblem
    }

    /// The NUL and date rules, checked through every array and dictionary.
    private var contentProblem: String? {
        switch self {
        case .string(let text):
            return text.utf8.contains(0) ? "a string holds a NUL character" : nil
        case .date(let seconds):
            return seconds.isFinite ? nil : "a date must be a finite number of seconds, not \(seconds)"
        case .array(let items):
            for item in items {
                if let problem = item.contentProblem { return problem }
            }
            return nil
        case .dictionary(let entries):
            for (key, item) in entries {
                if key.utf8.contains(0) { return "a dictionary key holds a NUL character" }
                if let problem = item.contentProblem { return problem }
            }
            return nil
        case .integer, .real, .boolean, .data:
            return nil
        }
    }
}
