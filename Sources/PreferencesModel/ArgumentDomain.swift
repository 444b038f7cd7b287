/// The argument domain: preferences given on the command line as `-Key value` pairs.
///
/// A value is parsed as old-style property-list text when it parses (`-AppleLanguages
/// "(de, fr)"` gives an array) and kept as the plain string otherwise. An argument that
/// does not start with a single `-`, a `-` with nothing after it, and a trailing `-Key`
/// without a value are not pairs and are skipped, as are arguments after `--`.
public enum ArgumentDomain {
    /// The domain built from `arguments` (without the executable's own path).
    public static func parse(_ arguments: some Sequence<String>) -> [String: PropertyListValue] {
        var domain: [String: PropertyListValue] = [:]
        var iterator = arguments.makeIterator()
        var pendingKey: String?
        while let argument = iterator.next() {
            if argument == "--" { break }
            if let key = pendingKey {
                pendingKey = nil
                if argument.hasPrefix("-"), argument.count > 1, Double(argument) == nil {
                    // A new key: the previous one had no value.
                    pendingKey = String(argument.dropFirst())
                    continue
                }
                domain[key] = value(of: argument)
                continue
            }
            if argument.hasPrefix("-"), !argument.hasPrefix("--"), argument.count > 1 {
                let key = String(argument.dropFirst())
                if PreferenceKey.problem(with: key) == nil { pendingKey = key }
            }
        }
        return domain
    }

    /// An argument's value: a property list when it is one that says more than a string
    /// (an array, a dictionary, data or a typed scalar), the text itself otherwise.
    static func value(of text: String) -> PropertyListValue {
        guard let first = text.first, "({<\"".contains(first),
            let parsed = try? OpenStepPropertyList.parse(text)
        else {
            return .string(text)
        }
        return parsed
    }
}
