import PreferencesModel
import PreferencesProtocol

extension ServiceLimits {
    /// Checks one value against what any stored value may be, wherever it comes from (a
    /// call on the bus, a roaming file, an administrator's managed or defaults file): the
    /// store's own rules (`PropertyListValue.storeProblem`: no NUL, finite dates, nesting the
    /// bus can carry back), nested at most ``nesting`` arrays and dictionaries, and at most
    /// ``valueBytes`` marshalled.
    /// - Parameter subject: how the message names the value ("the value of \"Key\"").
    func check(_ value: PropertyListValue, subject: String) throws(PreferencesServiceError) {
        let depth = value.nestingDepth
        if depth > nesting {
            throw .invalidValue("\(subject) nests arrays and dictionaries \(depth) deep, over the limit of \(nesting) (prefsd --max-nesting)")
        }
        if let problem = value.storeProblem { throw .invalidValue("\(subject) cannot be stored: \(problem)") }
        let size = value.marshalledSize
        if size > valueBytes {
            throw .quotaExceeded(
                "\(subject) takes \(size) bytes, over the limit of \(valueBytes) for one value (prefsd --max-value-size); store large data in a file and keep its path instead"
            )
        }
    }
}
