import DBus
import PreferencesModel

/// The `org.freedesktop.appearance` namespace: the keys toolkits read, with the types the
/// portal documents, taken from the prefsd domain of the same name.
///
/// | key | type | stored in prefsd as |
/// | --- | --- | --- |
/// | `color-scheme` | `u`: 0 no preference, 1 dark, 2 light | an integer |
/// | `accent-color` | `(ddd)`: red, green, blue from 0 to 1 | an array of three numbers |
/// | `contrast` | `u`: 0 no preference, 1 higher contrast | an integer |
/// | `reduced-motion` | `u`: 0 no preference, 1 reduced motion | an integer |
///
/// A stored value of another type or out of range is not served: the key reads as unset.
public enum Appearance {
    /// The namespace, and the prefsd domain it is read from.
    public static let namespace = "org.freedesktop.appearance"

    /// The keys the namespace serves.
    public static let keys: Set<String> = ["color-scheme", "accent-color", "contrast", "reduced-motion"]

    /// The portal's value for a stored value, or `nil` when the key is not one of the
    /// namespace's or the value does not fit its type.
    public static func portalValue(key: String, _ value: PropertyListValue) -> DBusValue? {
        switch key {
        case "color-scheme": return enumeration(value, cases: 0...2)
        case "contrast", "reduced-motion": return enumeration(value, cases: 0...1)
        case "accent-color":
            guard case .array(let items) = value, items.count == 3 else { return nil }
            var channels: [DBusValue] = []
            for item in items {
                let number: Double
                switch item {
                case .real(let real): number = real
                case .integer(let integer): number = Double(integer)
                default: return nil
                }
                guard number.isFinite, (0...1).contains(number) else { return nil }
                channels.append(.double(number))
            }
            return .structure(channels)
        default:
            return nil
        }
    }

    /// The value that says "no preference" for a key, announced when its stored value
    /// goes away; `nil` for `accent-color`, which has none.
    public static func noPreference(_ key: String) -> DBusValue? {
        ["color-scheme", "contrast", "reduced-motion"].contains(key) ? .uint32(0) : nil
    }

    /// An unsigned enumeration: an integer within `cases`.
    private static func enumeration(_ value: PropertyListValue, cases: ClosedRange<Int64>) -> DBusValue? {
        guard case .integer(let number) = value, cases.contains(number) else { return nil }
        return .uint32(UInt32(number))
    }
}
