import PreferencesModel

/// The effective values a preferences object has resolved, by key: what a repeated read
/// looks up.
///
/// An open-addressing table with its own hash of the key's UTF-8 bytes (a multiply-and-mix
/// hash seeded per table), in place of `Dictionary`: a cached read is a handful of
/// nanoseconds, and Swift's `Hasher` (SipHash, seeded and finalized for every lookup) was
/// most of its time. The keys are the ones the application reads, not input from outside,
/// and the seed keeps their places unpredictable all the same. Two keys whose bytes differ
/// are held apart even when `==` finds them equal (two spellings of "é"): each holds what
/// it resolved to. Entries are only added, or all removed at once when the values may have
/// changed.
struct ResolvedValues: Sendable {
    private static let minimumCapacity = 16

    /// Each place's key hash, 0 where the place is free (a key's hash is never 0). Kept
    /// apart from the keys and values so that probing copies and retains nothing.
    private var hashes: [UInt64] = []
    private var keys: [String] = []
    private var values: [PropertyListValue?] = []
    private let seed: UInt64
    /// The keys held.
    private(set) var count = 0

    /// An empty table; `seed` fixes where keys land (a random one by default).
    init(seed: UInt64 = .random(in: .min ... .max)) {
        self.seed = seed
    }

    /// The value resolved for `key`: `.some(nil)` when it resolved to no value, `nil` when
    /// it was not resolved yet.
    subscript(key: String) -> PropertyListValue?? {
        guard let index = place(of: key, hash: hash(of: key)), hashes[index] != 0 else { return nil }
        return .some(values[index])
    }

    /// Keeps `value` as what `key` resolves to, replacing what it held.
    mutating func set(_ value: PropertyListValue?, forKey key: String) {
        set(value, forKey: key, hash: hash(of: key))
    }

    /// ``set(_:forKey:)`` with the key's hash made already.
    private mutating func set(_ value: PropertyListValue?, forKey key: String, hash: UInt64) {
        if (count + 1) * 2 > hashes.count { grow() }
        guard let index = place(of: key, hash: hash) else { return }
        if hashes[index] == 0 {
            hashes[index] = hash
            keys[index] = key
            count += 1
        }
        values[index] = value
    }

    /// Forgets every key, keeping the room for as many.
    mutating func removeAll() {
        guard count > 0 else { return }
        empty(capacity: hashes.count)
    }

    /// Makes every place free, with room for `capacity` places.
    private mutating func empty(capacity: Int) {
        hashes = Array(repeating: 0, count: capacity)
        keys = Array(repeating: "", count: capacity)
        values = Array(repeating: nil, count: capacity)
        count = 0
    }

    /// Where `key` is held, or the free place where it would go; `nil` when the table has
    /// no room yet.
    private func place(of key: String, hash: UInt64) -> Int? {
        hashes.withUnsafeBufferPointer { hashes -> Int? in
            guard !hashes.isEmpty else { return nil }
            let mask = hashes.count - 1
            var index = Int(truncatingIfNeeded: hash) & mask
            while hashes[index] != 0 {
                if hashes[index] == hash && keys[index] == key { return index }
                index = (index + 1) & mask
            }
            return index
        }
    }

    /// Doubles the room (at most half of it is ever used, so probes stay short).
    private mutating func grow() {
        let old = (hashes, keys, values)
        empty(capacity: max(Self.minimumCapacity, hashes.count * 2))
        for index in old.0.indices where old.0[index] != 0 {
            set(old.2[index], forKey: old.1[index], hash: old.0[index])
        }
    }

    /// The key's hash: its UTF-8 bytes eight at a time, each word mixed in with a
    /// multiplication, then the whole avalanched, as in wyhash and the hash of `rustc`.
    private func hash(of key: String) -> UInt64 {
        let mixed =
            key.utf8.withContiguousStorageIfAvailable { hash(of: UnsafeRawBufferPointer($0)) }
            ?? Array(key.utf8).withUnsafeBytes { hash(of: $0) }
        var final = (mixed ^ (mixed >> 29)) &* 0xBF58_476D_1CE4_E5B9
        final ^= final >> 32
        return final == 0 ? 1 : final
    }

    private func hash(of bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash = seed ^ UInt64(truncatingIfNeeded: bytes.count) &* Self.multiplier
        var offset = 0
        while offset + 8 <= bytes.count {
            hash = Self.mix(hash, bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            offset += 8
        }
        if offset < bytes.count {
            var word: UInt64 = 0
            for (shift, byte) in bytes[offset...].enumerated() {
                word |= UInt64(byte) << (8 * UInt64(shift))
            }
            hash = Self.mix(hash, word)
        }
        return hash
    }

    private static let multiplier: UInt64 = 0x9E37_79B9_7F4A_7C15

    private static func mix(_ hash: UInt64, _ word: UInt64) -> UInt64 {
        let product = (hash ^ word) &* multiplier
        return product ^ (product >> 32)
    }
}
