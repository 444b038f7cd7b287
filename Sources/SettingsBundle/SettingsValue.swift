import PreferencesModel

/// Comparing stored values with a bundle's `Values` and `DefaultValue`.
public enum SettingsValue {
    /// Whether two values are the same setting as a person reads it: equivalent (strings
    /// under Unicode canonical equivalence, reals as numbers, see
    /// `PropertyListValue.isEquivalent(to:)`), or numbers of equal value (a bundle's
    /// integer `1` and a stored real `1.0`). For choosing what a control shows, never for
    /// deciding whether a write changes anything.
    public static func same(_ lhs: PropertyListValue, _ rhs: PropertyListValue) -> Bool {
        if lhs.isEquivalent(to: rhs) { return true }
        switch (lhs, rhs) {
        case (.integer(let a), .real(let b)), (.real(let b), .integer(let a)): return Double(a) == b
        default: return false
        }
    }

    /// A number held by `value` (integer or real), for sliders.
    public static func number(_ value: PropertyListValue?) -> Double? {
        switch value {
        case .integer(let number)?: Double(number)
        case .real(let number)?: number
        default: nil
        }
    }
}
