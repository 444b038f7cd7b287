import CGIO
import Synchronization

/// The GVariants last handed to GSettings, per full key and expected type, so that a read
/// of an unchanged value costs a lookup and a reference rather than building the value
/// again. An entry is good while the backend's change count is the one it was made at.
final class RenderedValues: @unchecked Sendable {
    /// At most this many keys are kept; past it the cache starts again.
    static let capacity = 4096

    /// Unchecked: the GVariant is immutable, and its reference count is atomic.
    private struct Entry: @unchecked Sendable {
        var changeCount: UInt64
        var type: [UInt8]
        /// One reference, owned by the cache.
        var variant: OpaquePointer
    }

    private let entries = Mutex<[String: Entry]>([:])

    deinit {
        entries.withLock { entries in
            for entry in entries.values { g_variant_unref(entry.variant) }
        }
    }

    /// A new reference to the value rendered for `key` and `type` at `changeCount`, if any.
    func value(_ key: String, type: OpaquePointer, changeCount: UInt64) -> OpaquePointer? {
        entries.withLock { entries in
            guard let entry = entries[key], entry.changeCount == changeCount, Self.matches(entry.type, type) else { return nil }
            return g_variant_ref(entry.variant)
        }
    }

    /// Keeps `variant` (floating or not) as `key`'s value of `type` at `changeCount`, and
    /// returns a reference for the caller.
    func keep(_ variant: OpaquePointer, _ key: String, type: OpaquePointer, changeCount: UInt64) -> OpaquePointer {
        let owned = g_variant_ref_sink(variant)!
        let bytes = Self.bytes(of: type)
        entries.withLock { entries in
            if entries.count >= Self.capacity, entries[key] == nil {
                for entry in entries.values { g_variant_unref(entry.variant) }
                entries.removeAll(keepingCapacity: true)
            }
            if let old = entries[key] { g_variant_unref(old.variant) }
            entries[key] = Entry(changeCount: changeCount, type: bytes, variant: g_variant_ref(owned))
        }
        return owned
    }

    private static func bytes(of type: OpaquePointer) -> [UInt8] {
        let length = Int(g_variant_type_get_string_length(type))
        guard let text = g_variant_type_peek_string(type) else { return [] }
        return (0..<length).map { UInt8(bitPattern: text[$0]) }
    }

    private static func matches(_ bytes: [UInt8], _ type: OpaquePointer) -> Bool {
        let length = Int(g_variant_type_get_string_length(type))
        guard length == bytes.count else { return false }
        guard let text = g_variant_type_peek_string(type) else { return false }
        for index in 0..<length where UInt8(bitPattern: text[index]) != bytes[index] { return false }
        return true
    }
}
