/// A value describes itself as its text on one line (``ValueText/compact(_:)``): `16`,
/// `"dark"`, `true`, `(1, 2)`, `{ Size = 16; }`, so that `print(value)` and
/// `"\(value)"` show the value, and `print(optionalValue)` shows `Optional(16)`.
extension PropertyListValue: CustomStringConvertible {
    /// The value as old-style text on one line, strings and dates quoted.
    public var description: String { ValueText.compact(self) }
}
