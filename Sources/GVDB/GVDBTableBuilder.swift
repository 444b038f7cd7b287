/// One hash table of a GVDB file, built item by item and serialised as GLib's gvdb-builder
/// serialises it (`gvdb_table_write_contents`, little-endian).
///
/// Items are kept in the order they are inserted: gvdb-builder keeps them in a `GHashTable`,
/// and the bytes of its file follow the order in which that table visits them, which depends
/// on the order of insertion. Inserting the same items in the same order as a GLib program
/// gives the same bytes as that program.
///
/// Each item is a value, a directory (an item that others name as their parent: it lists
/// them, sorted, so that `gvdb_table_list` finds them) or a nested hash table. An item with a
/// parent is stored under the part of its name after its parent's name.
public struct GVDBTableBuilder: Sendable {
    /// What an item holds.
    enum Content: Sendable {
        case value(GVDBValue)
        case directory
        indirect case table(GVDBTableBuilder)
    }

    /// One item: its full name, its parent's full name and what it holds.
    struct Item: Sendable {
        let key: String
        let parent: String?
        let content: Content
        /// The name's UTF-8 bytes, as stored and hashed.
        let keyBytes: [UInt8]

        init(key: String, parent: String?, content: Content) {
            self.key = key
            self.parent = parent
            self.content = content
            keyBytes = Array(key.utf8)
        }
    }

    /// The items, in insertion order.
    private(set) var items: [Item] = []
    /// Each item's position in ``items``, by name.
    private(set) var positions: [String: Int] = [:]

    /// An empty table.
    public init() {}

    /// The number of items.
    public var count: Int { items.count }

    /// Whether an item is named `key`.
    public func contains(_ key: String) -> Bool { positions[key] != nil }

    /// Inserts a value named `key`, below the directory `parent` if one is given (its name
    /// must start with the parent's).
    public mutating func insert(_ key: String, value: GVDBValue, parent: String? = nil) throws {
        try append(Item(key: key, parent: parent, content: .value(value)))
    }

    /// Inserts a directory named `key`, below the directory `parent` if one is given. Items
    /// inserted later with `key` as their parent are listed in it; a directory that nothing
    /// names is stored with no content, as gvdb-builder stores it.
    public mutating func insertDirectory(_ key: String, parent: String? = nil) throws {
        try append(Item(key: key, parent: parent, content: .directory))
    }

    /// Inserts a nested hash table named `key` (as dconf's `.locks`), below the directory
    /// `parent` if one is given.
    public mutating func insert(_ key: String, table: GVDBTableBuilder, parent: String? = nil) throws {
        try append(Item(key: key, parent: parent, content: .table(table)))
    }

    private mutating func append(_ item: Item) throws {
        guard positions[item.key] == nil else {
            throw GVDBError(.invalidInput, "“\(item.key)” is inserted twice: each name of a GVDB table is unique")
        }
        if let parent = item.parent {
            guard item.keyBytes.starts(with: Array(parent.utf8)), item.keyBytes.count > parent.utf8.count else {
                throw GVDBError(.invalidInput, "“\(item.key)” does not start with the name of its parent “\(parent)”")
            }
        }
        guard item.keyBytes.count - (item.parent?.utf8.count ?? 0) <= Int(UInt16.max) else {
            throw GVDBError(.invalidInput, "the name “\(item.key.prefix(64))…” is longer than GVDB's 65535 bytes")
        }
        positions[item.key] = items.count
        items.append(item)
    }

    /// The bytes of a GVDB file whose root table is this one. Throws if an item's parent is
    /// missing or is not a directory, or if the file would pass 4 GiB.
    public func serialized() throws -> [UInt8] {
        var file = FileBuilder()
        let root = try file.addHashTable(self)
        guard file.bytes.count <= Int(UInt32.max) else {
            throw GVDBError(.invalidInput, "the file would be \(file.bytes.count) bytes: GVDB's offsets are 32-bit, so store fewer or smaller values")
        }
        file.bytes.replaceSubrange(0..<24, with: GVDBFormat.header(root: root))
        return file.bytes
    }
}

/// The constants and layout of GVDB's format (`gvdb-format.h`).
package enum GVDBFormat {
    /// "GVariant" read as two little-endian 32-bit words.
    package static let signature: [UInt8] = Array("GVariant".utf8)
    /// The header: signature, version, options, root pointer.
    package static let headerSize = 24
    /// A hash item: hash, parent, key start, key size (16 bits), type, unused, value pointer.
    package static let itemSize = 24
    /// The parent of an item that has none.
    package static let noParent: UInt32 = 0xFFFF_FFFF
    /// The bloom filter's shift gvdb-builder writes (it writes no bloom words).
    package static let bloomShift: UInt32 = 5

    /// The header pointing at the root table `root`.
    package static func header(root: Range<UInt32>) -> [UInt8] {
        var header = signature
        header += le32(0) + le32(0) + le32(root.lowerBound) + le32(root.upperBound)
        return header
    }

    /// `value` in four little-endian bytes.
    package static func le32(_ value: UInt32) -> [UInt8] {
        [
            UInt8(truncatingIfNeeded: value), UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value >> 16),
            UInt8(truncatingIfNeeded: value >> 24),
        ]
    }
}

/// gvdb-builder's `FileBuilder`: chunks appended one after the other, each aligned, into one
/// growing file whose first 24 bytes are left for the header.
private struct FileBuilder {
    var bytes: [UInt8] = Array(repeating: 0, count: GVDBFormat.headerSize)

    /// Appends `size` zero bytes at the next multiple of `alignment`; their range.
    mutating func allocate(alignment: Int, size: Int) -> Range<UInt32> {
        while bytes.count % alignment != 0 { bytes.append(0) }
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: size))
        return UInt32(truncatingIfNeeded: start)..<UInt32(truncatingIfNeeded: bytes.count)
    }

    mutating func put32(_ value: UInt32, at offset: Int) {
        bytes[offset] = UInt8(truncatingIfNeeded: value)
        bytes[offset + 1] = UInt8(truncatingIfNeeded: value >> 8)
        bytes[offset + 2] = UInt8(truncatingIfNeeded: value >> 16)
        bytes[offset + 3] = UInt8(truncatingIfNeeded: value >> 24)
    }

    /// `file_builder_add_hash`: the table's header, buckets and items, then for each item in
    /// order its name, then its value, child list or nested table.
    mutating func addHashTable(_ table: GVDBTableBuilder) throws -> Range<UInt32> {
        let items = table.items
        let bucketCount = items.count
        let keyBytes = items.map(\.keyBytes)
        let hashes = keyBytes.map { djbHash($0) }

        // gvdb-builder's buckets: the GHashTable's visiting order, each item put at the head
        // of its bucket's list, so each bucket holds its items in reverse visiting order.
        var visit = GLibHashOrder()
        for (id, hash) in hashes.enumerated() { visit.insert(hash: hash, id: id) }
        var bucketStarts = Array(repeating: 0, count: bucketCount + 1)
        for hash in hashes { bucketStarts[Int(hash % UInt32(bucketCount)) + 1] += 1 }
        for bucket in 0..<bucketCount { bucketStarts[bucket + 1] += bucketStarts[bucket] }
        var next = bucketStarts
        var ordered = Array(repeating: 0, count: items.count)
        var index = Array(repeating: 0, count: items.count)
        for id in visit.order.reversed() {
            let bucket = Int(hashes[id] % UInt32(bucketCount))
            ordered[next[bucket]] = id
            index[id] = next[bucket]
            next[bucket] += 1
        }

        // Each directory's children, sorted by name as gvdb_item_set_parent keeps them.
        var children = Array(repeating: [Int](), count: items.count)
        let positions = table.positions
        var parentIDs = [Int?](repeating: nil, count: items.count)
        for (id, item) in items.enumerated() {
            guard let parent = item.parent else { continue }
            guard let parentID = positions[parent], case .directory = items[parentID].content else {
                throw GVDBError(.invalidInput, "the parent “\(parent)” of “\(item.key)” is not in the table as a directory: insert it with insertDirectory")
            }
            children[parentID].append(id)
            parentIDs[id] = parentID
        }
        for id in children.indices {
            children[id].sort { keyBytes[$0].lexicographicallyPrecedes(keyBytes[$1]) }
        }

        let region = allocate(alignment: 4, size: 8 + 4 * bucketCount + GVDBFormat.itemSize * items.count)
        let start = Int(region.lowerBound)
        put32(GVDBFormat.bloomShift << 27, at: start)
        put32(UInt32(bucketCount), at: start + 4)
        for bucket in 0..<bucketCount {
            put32(UInt32(bucketStarts[bucket]), at: start + 8 + 4 * bucket)
        }
        let itemsStart = start + 8 + 4 * bucketCount
        for (position, id) in ordered.enumerated() {
            let entry = itemsStart + GVDBFormat.itemSize * position
            put32(hashes[id], at: entry)
            let parentID = parentIDs[id]
            put32(parentID.map { UInt32(index[$0]) } ?? GVDBFormat.noParent, at: entry + 4)
            let name = keyBytes[id].dropFirst(parentID.map { keyBytes[$0].count } ?? 0)
            put32(UInt32(truncatingIfNeeded: bytes.count), at: entry + 8)
            bytes[entry + 12] = UInt8(truncatingIfNeeded: name.count)
            bytes[entry + 13] = UInt8(truncatingIfNeeded: name.count >> 8)
            bytes += name
            var pointer: Range<UInt32>?
            switch items[id].content {
            case .value(let value):
                bytes[entry + 14] = UInt8(ascii: "v")
                while bytes.count % 8 != 0 { bytes.append(0) }
                let start = bytes.count
                bytes += value.bytes
                bytes.append(0)
                bytes += value.typeString.utf8
                pointer = UInt32(truncatingIfNeeded: start)..<UInt32(truncatingIfNeeded: bytes.count)
            case .directory where !children[id].isEmpty:
                bytes[entry + 14] = UInt8(ascii: "L")
                let range = allocate(alignment: 4, size: 4 * children[id].count)
                for (slot, child) in children[id].enumerated() {
                    put32(UInt32(index[child]), at: Int(range.lowerBound) + 4 * slot)
                }
                pointer = range
            case .directory:
                pointer = nil
            case .table(let nested):
                bytes[entry + 14] = UInt8(ascii: "H")
                pointer = try addHashTable(nested)
            }
            if let pointer {
                put32(pointer.lowerBound, at: entry + 16)
                put32(pointer.upperBound, at: entry + 20)
            }
        }
        return region
    }
}
