import CGIO
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The GVariants last handed to GSettings, per full key and expected type, so that a read
/// of an unchanged value costs a lookup and a reference rather than building the value
/// again. An entry is good while the backend's change count is the one it was made at.
/// A lookup works on GLib's C strings as they come: it hashes and compares their bytes,
/// allocating nothing.
final class RenderedValues: @unchecked Sendable {
    /// At most this many keys are kept; past it the cache starts again.
    static let capacity = 4096

    /// Unchecked: the GVariant is immutable, and its reference count is atomic.
    private struct Entry: @unchecked Sendable {
        var key: [UInt8]
        var changeCount: UInt64
        var type: [UInt8]
        /// One reference, owned by the cache.
        var variant: OpaquePointer
    }

    /// By the hash of the key's bytes; an entry whose key differs is a miss (and is
    /// replaced by the next ``keep(_:_:type:changeCount:)``).
    private let entries = Mutex<[UInt64: Entry]>([:])

    deinit {
        entries.withLock { entries in
            for entry in entries.values { g_variant_unref(entry.variant) }
        }
    }

    /// A new reference to the value rendered for `key` and `type` at `changeCount`, if any.
    func value(_ key: UnsafePointer<CChar>, type: OpaquePointer, changeCount: UInt64) -> OpaquePointer? {
        let (hash, length) = Self.hash(key)
        return entries.withLock { entries in
            guard let entry = entries[hash], entry.changeCount == changeCount,
                  Self.matches(entry.key, UnsafeRawPointer(key), length),
                  Self.matches(entry.type, UnsafeRawPointer(g_variant_type_peek_string(type)), Int(g_variant_type_get_string_length(type)))
            else { return nil }
            return g_variant_ref(entry.variant)
        }
    }

    /// Keeps `variant` (floating or not) as `key`'s value of `type` at `changeCount`, and
    /// returns a reference for the caller.
    func keep(_ variant: OpaquePointer, _ key: UnsafePointer<CChar>, type: OpaquePointer, changeCount: UInt64) -> OpaquePointer {
        let owned = g_variant_ref_sink(variant)!
        let (hash, length) = Self.hash(key)
        let entry = Entry(
            key: Self.bytes(UnsafeRawPointer(key), length), changeCount: changeCount,
            type: Self.bytes(UnsafeRawPointer(g_variant_type_peek_string(type)), Int(g_variant_type_get_string_length(type))),
            variant: g_variant_ref(owned))
        let dropped = entries.withLock { entries -> [OpaquePointer] in
            var dropped: [OpaquePointer] = []
            if entries.count >= Self.capacity, entries[hash] == nil {
                dropped = entries.values.map(\.variant)
                entries.removeAll(keepingCapacity: true)
            }
            if let old = entries.updateValue(entry, forKey: hash) { dropped.append(old.variant) }
            return dropped
        }
        for variant in dropped { g_variant_unref(variant) }
        return owned
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
