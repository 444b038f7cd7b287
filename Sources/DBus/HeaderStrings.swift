import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The header strings (path, interface, member, destination, sender) of the last message
/// decoded, handed out again when the next message carries the same bytes.
///
/// The calls to a registered object carry the same path, interface and destination over and
/// over, and one client sends many calls of one member: making each a new Swift string
/// (`String(cString:)`: a length, a UTF-8 check, an allocation for any longer than 15 bytes,
/// and a release later) costs more than the rest of decoding a `Read`'s header; a reused
/// one costs a comparison of its bytes.
final class HeaderStrings: Sendable {
    /// The header fields remembered, one string each.
    enum Field: Int, CaseIterable {
        case path, interface, member, destination, sender
    }

    private let recent = Mutex<[String]>(Array(repeating: "", count: Field.allCases.count))

    /// `pointer`'s C string as a Swift string: the one remembered for `field` when it holds
    /// the same bytes, else a new one, remembered from now on. Nil for nil.
    func string(_ pointer: UnsafePointer<CChar>?, _ field: Field) -> String? {
        guard let pointer else { return nil }
        let length = strlen(pointer)
        let remembered = recent.withLock { $0[field.rawValue] }
        var bytes = remembered
        let same = bytes.withUTF8 { utf8 in
            guard let base = utf8.baseAddress, utf8.count == length else { return false }
            return memcmp(base, pointer, length) == 0
        }
        if same { return remembered }
        let made = String(cString: pointer)
        recent.withLock { $0[field.rawValue] = made }
        return made
    }
}
