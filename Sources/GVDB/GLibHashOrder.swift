/// The string hash both gvdb-builder (`djb_hash`) and GLib (`g_str_hash`) use: djb's
/// `h * 33 + c` from 5381, each byte taken as a *signed* char.
package func djbHash(_ key: UnsafeBufferPointer<UInt8>) -> UInt32 {
    var hash: UInt32 = 5381
    for byte in key {
        hash = hash &* 33 &+ UInt32(bitPattern: Int32(Int8(bitPattern: byte)))
    }
    return hash
}

/// ``djbHash(_:)`` of the bytes `key`.
package func djbHash(_ key: [UInt8]) -> UInt32 {
    key.withUnsafeBufferPointer { djbHash($0) }
}

/// ``djbHash(_:)`` of the UTF-8 bytes of `key`.
package func djbHash(_ key: String) -> UInt32 {
    var key = key
    return key.withUTF8 { djbHash($0) }
}

/// The order in which a GLib 2.74 `GHashTable` of strings (`g_str_hash`) visits its entries
/// (`g_hash_table_foreach`, `GHashTableIter`), for a table filled by insertions only.
///
/// gvdb-builder lays out each bucket's items in the order its `GHashTable` visits them, and
/// dconf-service builds that table from another `GHashTable` (its database changeset): the
/// bytes of the file depend on these orders, so a writer that wants GLib's bytes plays them
/// out. This is GLib's open addressing (`(hash * 11) % prime` then triangular probing modulo
/// a power of two) with its in-place resize at 15/16 occupancy, keyed by the caller's ids.
package struct GLibHashOrder {
    /// Each slot's hash: 0 for an empty slot (GLib's `UNUSED_HASH_VALUE`).
    private var hashes: [UInt32] = []
    /// Each slot's id, meaningful where the hash is not 0.
    private var ids: [Int] = []
    private var mod = 0
    private var mask = 0
    private var nodes = 0
    private var occupied = 0

    /// GLib's `prime_mod`: for a table of 2^n slots, the largest prime below it.
    private static let primeMod: [Int] = [
        1, 2, 3, 7, 13, 31, 61, 127, 251, 509, 1021, 2039, 4093, 8191, 16381, 32749, 65521, 131071, 262139, 524287,
        1_048_573, 2_097_143, 4_194_301, 8_388_593, 16_777_213, 33_554_393, 67_108_859, 134_217_689, 268_435_399, 536_870_909,
        1_073_741_789, 2_147_483_647,
    ]

    /// An empty table (8 slots, as `g_hash_table_new`).
    package init() {
        setShift(3)
        hashes = Array(repeating: 0, count: 8)
        ids = Array(repeating: 0, count: 8)
    }

    /// The ids in visiting order.
    package var order: [Int] {
        hashes.indices.filter { hashes[$0] >= 2 }.map { ids[$0] }
    }

    /// Inserts `id`, whose key hashes (with `g_str_hash`) to `hash`. The caller inserts each
    /// key at most once (GLib keeps a replaced key's slot, so a replacement is no insertion).
    package mutating func insert(hash keyHash: UInt32, id: Int) {
        let hash = keyHash < 2 ? 2 : keyHash
        var index = Int((hash &* 11) % UInt32(mod))
        var step = 0
        while hashes[index] != 0 {
            step += 1
            index = (index + step) & mask
        }
        hashes[index] = hash
        ids[index] = id
        nodes += 1
        occupied += 1
        if (hashes.count > nodes * 4 && hashes.count > 8) || hashes.count <= occupied + occupied / 16 {
            resize()
        }
    }

    private mutating func setShift(_ shift: Int) {
        mod = Self.primeMod[shift]
        mask = (1 << shift) - 1
    }

    /// `g_hash_table_resize`: the new size from `nnodes * 1.333`, then entries moved in
    /// place, evicting whatever sits where an entry belongs.
    private mutating func resize() {
        let oldSize = hashes.count
        var size = Int(Double(nodes) * 1.333)
        var shift = 0
        while size != 0 {
            size >>= 1
            shift += 1
        }
        shift = max(shift, 3)
        setShift(shift)
        let newSize = 1 << shift
        if newSize > oldSize {
            hashes += Array(repeating: 0, count: newSize - oldSize)
            ids += Array(repeating: 0, count: newSize - oldSize)
        }
        var placed = Array(repeating: false, count: max(newSize, oldSize))
        for slot in 0..<oldSize {
            var hash = hashes[slot]
            if hash < 2 {
                hashes[slot] = 0
                continue
            }
            if placed[slot] { continue }
            hashes[slot] = 0
            var id = ids[slot]
            while true {
                var index = Int((hash &* 11) % UInt32(mod))
                var step = 0
                while placed[index] {
                    step += 1
                    index = (index + step) & mask
                }
                placed[index] = true
                let replaced = hashes[index]
                let replacedID = ids[index]
                hashes[index] = hash
                ids[index] = id
                if replaced < 2 { break }
                hash = replaced
                id = replacedID
            }
        }
        if newSize < oldSize {
            hashes.removeLast(oldSize - newSize)
            ids.removeLast(oldSize - newSize)
        }
        occupied = nodes
    }
}
