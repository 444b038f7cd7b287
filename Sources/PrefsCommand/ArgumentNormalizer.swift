/// Rewrites `defaults`-style spellings that swift-argument-parser cannot parse.
///
/// `-g` and `-globalDomain` in the domain position become `NSGlobalDomain` (every domain
/// position for `monitor`). Everything after `--`, and everything after the domain of
/// `write` (its type flags and values), is left alone.
public enum ArgumentNormalizer {
    /// The spellings of the global domain besides `NSGlobalDomain`.
    public static let globalAliases: Set<String> = ["-g", "-globalDomain"]

    /// The arguments (without the program name) with the global-domain aliases replaced.
    public static func normalize(_ arguments: [String]) -> [String] {
        var result = arguments
        var index = 0
        // The verb: the first argument that is not an option.
        while index < result.count, result[index].hasPrefix("-") { index += 1 }
        guard index < result.count else { return result }
        var verb = result[index]
        index += 1
        if verb == "volatile" {
            while index < result.count, result[index].hasPrefix("-") { index += 1 }
            guard index < result.count else { return result }
            verb = "volatile " + result[index]
            index += 1
        }
        let everyPosition = verb == "monitor"
        while index < result.count {
            let argument = result[index]
            if argument == "--" { break }
            if globalAliases.contains(argument) {
                result[index] = "NSGlobalDomain"
                if !everyPosition { break }
            } else if !argument.hasPrefix("-") {
                // The first positional is the domain: done unless every position is one.
                if !everyPosition { break }
            }
            index += 1
        }
        return result
    }
}
