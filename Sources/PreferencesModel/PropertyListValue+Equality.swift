import Foundation
import StandardExtras

/// Two values are equal when they are the same bytes (contract 0.3, "a write that changes
/// nothing"): the same property-list type and the same bits. This is the one comparison
/// every layer uses to decide whether a write changes anything, what a `Changed` signal
/// carries and what a cache or an observer treats as new.
///
/// - Strings compare by their UTF-8 bytes, not by Unicode canonical equivalence as Swift's
///   `String ==` does: NFC `é` (U+00E9) and NFD `é` (U+0065 U+0301) are different values.
/// - Reals and dates compare by their bit pattern, not as IEEE numbers: `-0.0` is not
///   `0.0`, and a NaN equals a NaN of the same bits.
/// - Arrays compare element by element, dictionaries entry by entry, under the same rule;
///   a dictionary's keys compare by their UTF-8 bytes too.
///
/// A dictionary is a Swift `[String: PropertyListValue]`, whose keys are told apart by
/// canonical equivalence: one dictionary cannot hold two keys that differ only in their
/// normalisation (`"é"` NFC and `"é"` NFD). Such a pair never reaches prefsd's store: the
/// bus decoder refuses a value whose dictionary names one key twice
/// (`PropertyListValue.init(dbus:)`). Two dictionaries are equal when they have the same
/// number of entries and each key of one is found in the other spelled with the same bytes
/// and holding an equal value.
///
/// Hashing agrees with this equality: strings hash their UTF-8 bytes, reals and dates their
/// bit pattern, dictionaries their entries in any order.
///
/// For "the same setting as a person sees it" (a stored value against a bundle's choices),
/// use ``isEquivalent(to:)`` instead.
extension PropertyListValue {
    /// Whether two values are byte for byte the same: same type, same bits.
    public static func == (lhs: PropertyListValue, rhs: PropertyListValue) -> Bool {
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)): return a.hasSameBytes(as: b)
        case (.integer(let a), .integer(let b)): return a == b
        case (.real(let a), .real(let b)): return a.bitPattern == b.bitPattern
        case (.boolean(let a), .boolean(let b)): return a == b
        case (.data(let a), .data(let b)): return a == b
        case (.date(let a), .date(let b)): return a.bitPattern == b.bitPattern
        case (.array(let a), .array(let b)): return a.count == b.count && a.elementsEqual(b, by: ==)
        case (.dictionary(let a), .dictionary(let b)): return sameEntries(a, b)
        default: return false
        }
    }

    /// Hashes the value's type and bits, consistently with ``==(_:_:)``.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .string(let text):
            hasher.combine(0 as UInt8)
            Self.hashBytes(of: text, into: &hasher)
        case .integer(let number):
            hasher.combine(1 as UInt8)
            hasher.combine(number)
        case .real(let number):
            hasher.combine(2 as UInt8)
            hasher.combine(number.bitPattern)
        case .boolean(let flag):
            hasher.combine(3 as UInt8)
            hasher.combine(flag)
        case .data(let bytes):
            hasher.combine(4 as UInt8)
            hasher.combine(bytes)
        case .date(let seconds):
            hasher.combine(5 as UInt8)
            hasher.combine(seconds.bitPattern)
        case .array(let items):
            hasher.combine(6 as UInt8)
            hasher.combine(items.count)
            for item in items { hasher.combine(item) }
        case .dictionary(let entries):
            hasher.combine(7 as UInt8)
            hasher.combine(entries.count)
            // Entries come in no particular order: each is hashed alone and the results
            // are combined by a commutative operation, as Swift's own `Dictionary` does.
            var combined = 0
            for (key, value) in entries {
                var entry = Hasher()
                Self.hashBytes(of: key, into: &entry)
                entry.combine(value)
                combined ^= entry.finalize()
            }
            hasher.combine(combined)
        }
    }

    /// Whether two dictionaries hold the same keys, spelled with the same bytes, with equal
    /// values. A key of `a` is looked up in `b` under canonical equivalence (how `b` tells
    /// its keys apart, so at most one key of `b` matches) and then compared byte for byte.
    private static func sameEntries(_ a: [String: PropertyListValue], _ b: [String: PropertyListValue]) -> Bool {
        guard a.count == b.count else { return false }
        for (key, value) in a {
            guard let index = b.index(forKey: key) else { return false }
            let other = b[index]
            guard key.hasSameBytes(as: other.key), value == other.value else { return false }
        }
        return true
    }

    private static func hashBytes(of text: String, into hasher: inout Hasher) {
        var text = text
        hasher.combine(text.utf8.count)
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Whether two values are the same as a person reads them: strings under Unicode
    /// canonical equivalence, reals and dates as IEEE numbers (`-0.0` is `0.0`, a NaN is
    /// never equal), arrays and dictionaries element by element under the same rule.
    ///
    /// For showing which of a settings bundle's choices a stored value is. Never use it to
    /// decide whether a write changes anything: that is ``==(_:_:)``, byte for byte.
    public func isEquivalent(to other: PropertyListValue) -> Bool {
        switch (self, other) {
        case (.string(let a), .string(let b)): return a == b
        case (.real(let a), .real(let b)): return a == b
        case (.date(let a), .date(let b)): return a == b
        case (.array(let a), .array(let b)): return a.count == b.count && a.elementsEqual(b) { $0.isEquivalent(to: $1) }
        case (.dictionary(let a), .dictionary(let b)):
            guard a.count == b.count else { return false }
            return a.allSatisfy { key, value in b[key].map { value.isEquivalent(to: $0) } ?? false }
        default: return self == other
        }
    }
}
