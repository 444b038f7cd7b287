import DBus
import PreferencesModel
import PreferencesProtocol

/// Typed access to a call's arguments once its signature has been checked, turning
/// names and values into model types with the service's errors.
struct Arguments {
    let body: [DBusValue]
    let limits: ServiceLimits

    /// The string argument at `index`.
    func string(_ index: Int) throws(PreferencesServiceError) -> String {
        guard index < body.count, case .string(let text) = body[index] else {
            throw .invalidArguments("argument \(index + 1) must be a string")
        }
        return text
    }

    /// The domain name at `index`, validated.
    func domain(_ index: Int) throws(PreferencesServiceError) -> DomainName {
        let text = try string(index)
        do { return try DomainName(text) } catch { throw PreferencesServiceError(error) }
    }

    /// The key at `index`, validated and in Unicode normalization form C.
    func key(_ index: Int) throws(PreferencesServiceError) -> String {
        let text = try string(index)
        try Self.validate(key: text)
        return PreferenceKey.normalized(text)
    }

    /// The `as` argument at `index`.
    func strings(_ index: Int) throws(PreferencesServiceError) -> [String] {
        guard index < body.count, case .array(_, let items) = body[index] else {
            throw .invalidArguments("argument \(index + 1) must be an array of strings")
        }
        var strings: [String] = []
        strings.reserveCapacity(items.count)
        for case .string(let text) in items { strings.append(text) }
        return strings
    }

    /// The `as` argument at `index` as validated keys, each named once (after NFC
    /// normalization: two spellings of one key are one key).
    func keys(_ index: Int) throws(PreferencesServiceError) -> [String] {
        let keys = try strings(index)
        for key in keys { try Self.validate(key: key) }
        let normalized = keys.map(PreferenceKey.normalized)
        try Self.refuseDuplicates(normalized, argument: index)
        return normalized
    }

    /// The `as` argument at `index` as validated domain names.
    func domains(_ index: Int) throws(PreferencesServiceError) -> [DomainName] {
        var names: [DomainName] = []
        for text in try strings(index) {
            do { names.append(try DomainName(text)) } catch { throw PreferencesServiceError(error) }
        }
        return names
    }

    /// The `v` argument at `index` as a property-list value within the limits.
    func value(_ index: Int) throws(PreferencesServiceError) -> PropertyListValue {
        guard index < body.count else { throw .invalidArguments("argument \(index + 1) is missing") }
        let value: PropertyListValue
        do { value = try PropertyListValue(dbus: body[index], maximumNesting: limits.nesting) } catch {
            throw PreferencesServiceError(error)
        }
        try checkSize(of: value, key: nil)
        return value
    }

    /// The `a{sv}` argument at `index` as validated keys and values within the limits,
    /// each key named once (after NFC normalization).
    func values(_ index: Int) throws(PreferencesServiceError) -> [String: PropertyListValue] {
        guard index < body.count else { throw .invalidArguments("argument \(index + 1) is missing") }
        if case .array(_, let items) = body[index] {
            var keys: [String] = []
            keys.reserveCapacity(items.count)
            for case .dictEntry(.string(let key), _) in items { keys.append(PreferenceKey.normalized(key)) }
            try Self.refuseDuplicates(keys, argument: index)
        }
        let values: [String: PropertyListValue]
        do { values = try PropertyListValue.dictionary(dbus: body[index], maximumNesting: limits.nesting) } catch {
            throw PreferencesServiceError(error)
        }
        var normalized: [String: PropertyListValue] = [:]
        for (key, value) in values {
            try Self.validate(key: key)
            try checkSize(of: value, key: key)
            normalized[PreferenceKey.normalized(key)] = value
        }
        return normalized
    }

    private func checkSize(of value: PropertyListValue, key: String?) throws(PreferencesServiceError) {
        try limits.check(value, subject: key.map { "the value of \"\($0)\"" } ?? "the value")
    }

    /// Refuses a list of keys that names one key twice: the second mention would be
    /// counted, or undone, twice.
    private static func refuseDuplicates(_ keys: [String], argument index: Int) throws(PreferencesServiceError) {
        var seen = Set<String>()
        seen.reserveCapacity(keys.count)
        for key in keys where !seen.insert(key).inserted {
            throw .invalidArguments(
                "argument \(index + 1) names the key \"\(key.prefix(80))\" twice (keys are compared after Unicode NFC normalization); name each key once")
        }
    }

    private static func validate(key: String) throws(PreferencesServiceError) {
        do { try PreferenceKey.validate(key) } catch { throw PreferencesServiceError(error) }
    }
}

extension Arguments {
    /// The `t` argument at `index`.
    func uint64(_ index: Int) throws(PreferencesServiceError) -> UInt64 {
        guard index < body.count, case .uint64(let number) = body[index] else {
            throw .invalidArguments("argument \(index + 1) must be an unsigned 64-bit integer (t)")
        }
        return number
    }

    /// The `u` argument at `index`.
    func uint32(_ index: Int) throws(PreferencesServiceError) -> UInt32 {
        guard index < body.count, case .uint32(let number) = body[index] else {
            throw .invalidArguments("argument \(index + 1) must be an unsigned 32-bit integer (u)")
        }
        return number
    }
}
