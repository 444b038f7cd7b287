import CGSettingsBackend

/// The GVariants last handed to GSettings, per full key and expected type, so that a read
/// of an unchanged value costs a lookup and a reference rather than a Swift string, a
/// dictionary walk and a new GVariant: a cached read allocates nothing. An entry is good
/// while the backend's change count is the one it was made at. A lookup works on GLib's C
/// strings as they come: it hashes and compares their bytes.
///
/// Not thread-safe by itself: ``Backend`` uses it with its mutex held.
struct RenderedValues {
    /// At most this many keys are kept; past it the cache starts again.
    static let capacity = 4096

    private struct Entry {
        var key: [UInt8]
        var type: [UInt8]
        var changeCount: UInt64
        /// One reference, owned by the cache.
        var variant: OpaquePointer
    }

    /// By the hash of the key's bytes; an entry whose key or type differs is a miss.
    private var entries: [UInt64: Entry] = [:]

    /// A new reference to the value rendered for `key` and `type` at `changeCount`, if any.
    func value(_ key: UnsafePointer<CChar>, type: OpaquePointer, changeCount: UInt64) -> OpaquePointer? {
        let (hash, length) = Self.hash(key)
        guard let entry = entries[hash], entry.changeCount == changeCount,
            Self.matches(entry.key, UnsafeRawPointer(key), length),
            Self.matches(entry.type, UnsafeRawPointer(g_variant_type_peek_string(type)), Int(g_variant_type_get_string_length(type)))
        else { return nil }
        return g_variant_ref(entry.variant)
    }

    /// Keeps a reference to `variant` (owned, not floating) as `key`'s value of `type` at
    /// `changeCount`; returns the references it dropped, to release without the mutex.
    mutating func keep(_ variant: OpaquePointer, _ key: UnsafePointer<CChar>, type: OpaquePointer, changeCount: UInt64) -> [OpaquePointer] {
        let (hash, length) = Self.hash(key)
        var dropped: [OpaquePointer] = []
        if entries.count >= Self.capacity, entries[hash] == nil {
            for entry in entries.values { dropped.append(entry.variant) }
            entries.removeAll(keepingCapacity: true)
        }
        let entry = Entry(
            key: Self.bytes(UnsafeRawPointer(key), length),
            type: Self.bytes(UnsafeRawPointer(g_variant_type_peek_string(type)), Int(g_variant_type_get_string_length(type))),
            changeCount: changeCount, variant: g_variant_ref(variant))
        if let old = entries.updateValue(entry, forKey: hash) { dropped.append(old.variant) }
        return dropped
    }

    /// Empties the cache; returns the references it held, to release.
    mutating func removeAll() -> [OpaquePointer] {
        defer { entries.removeAll() }
        return entries.values.map { $0.variant }
    }

    /// FNV-1a of a C string's bytes, and their count.
    private static func hash(_ text: UnsafePointer<CChar>) -> (UInt64, Int) {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var length = 0
        while text[length] != 0 {
            hash = (hash ^ UInt64(UInt8(bitPattern: text[length]))) &* 0x100_0000_01b3
            length += 1
        }
        return (hash, length)
    }

    private static func bytes(_ start: UnsafeRawPointer?, _ count: Int) -> [UInt8] {
        guard let start, count > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: start, count: count))
    }

    private static func matches(_ bytes: [UInt8], _ start: UnsafeRawPointer?, _ count: Int) -> Bool {
        guard bytes.count == count else { return false }
        guard count > 0 else { return true }
        guard let start else { return false }
        return bytes.withUnsafeBytes { stored in
            guard let base = stored.baseAddress else { return false }
            return memcmp(base, start, count) == 0
        }
    }
}
