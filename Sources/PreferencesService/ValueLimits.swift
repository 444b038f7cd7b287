import PreferencesModel
import PreferencesProtocol

extension ServiceLimits {
    /// Checks one value against what any stored value may be, wherever it comes from (a
    /// call on the bus or an administrator's managed file): nested at most ``nesting``
    /// arrays and dictionaries, never deeper than the bus can carry back inside a signal,
    /// and at most ``valueBytes`` marshalled.
    /// - Parameter subject: how the message names the value ("the value of \"Key\"").
    func check(_ value: PropertyListValue, subject: String) throws(PreferencesServiceError) {
        let depth = Self.nestingDepth(of: value)
        if depth > nesting {
            throw .invalidValue("\(subject) nests arrays and dictionaries \(depth) deep, over the limit of \(nesting) (prefsd --max-nesting)")
        }
        if value.dbusNesting > PropertyListValue.maximumDBusNesting {
            throw .invalidValue(
                "\(subject) nests too deeply to be sent back on the bus (D-Bus allows 64 containers): use at most 30 nested arrays or 20 nested dictionaries")
        }
        let size = value.marshalledSize
        if size > valueBytes {
            throw .quotaExceeded(
                "\(subject) takes \(size) bytes, over the limit of \(valueBytes) for one value (prefsd --max-value-size); store large data in a file and keep its path instead"
            )
        }
    }

    /// How many arrays and dictionaries nest in `value` (0 for a scalar).
    static func nestingDepth(of value: PropertyListValue) -> Int {
        switch value {
        case .array(let items): 1 + (items.lazy.map(nestingDepth).max() ?? 0)
        case .dictionary(let entries): 1 + (entries.values.lazy.map(nestingDepth).max() ?? 0)
        default: 0
        }
    }
}
