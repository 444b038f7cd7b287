#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension String {
    /// Whether the two strings are the same UTF-8 bytes (not `==`, which holds canonically
    /// equivalent spellings equal).
    public func hasSameBytes(as other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        var a = self
        var b = other
        // Native strings are contiguous UTF-8: `withUTF8` copies nothing, and memcmp
        // compares a 1 MiB value in microseconds.
        return a.withUTF8 { left in
            b.withUTF8 { right in
                guard let leftBase = left.baseAddress, let rightBase = right.baseAddress else { return left.count == right.count }
                return memcmp(leftBase, rightBase, left.count) == 0
            }
        }
    }
}
