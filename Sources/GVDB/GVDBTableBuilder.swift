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
    }

    /// The items, in insertion order.
    private(set) var items: [Item] = []
    /// Each item's position in ``items``, by name.
    private var positions: [String: Int] = [:]

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
            guard item.key.utf8.starts(with: parent.utf8), item.key.utf8.count > parent.utf8.count else {
                throw GVDBError(.invalidInput, "“\(item.key)” does not start with the name of its parent “\(parent)”")
            }
        }
        guard item.key.utf8.count - (item.parent?.utf8.count ?? 0) <= Int(UInt16.max) else {
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
enum GVDBFormat {
    /// "GVariant" read as two little-endian 32-bit words.
    static let signature: [UInt8] = Array("GVariant".utf8)
    /// The header: signature, version, options, root pointer.
    static let headerSize = 24
    /// A hash item: hash, parent, key start, key size (16 bits), type, unused, value pointer.
    static let itemSize = 24
    /// The parent of an item that has none.
    static let noParent: UInt32 = 0xFFFF_FFFF
    /// The bloom filter's shift gvdb-builder writes (it writes no bloom words).
    static let bloomShift: UInt32 = 5

    /// The header pointing at the root table `root`.
    static func header(root: Range<UInt32>) -> [UInt8] {
        var header = signature
        header += le32(0) + le32(0) + le32(root.lowerBound) + le32(root.upperBound)
        return header
    }

    /// `value` in four little-endian bytes.
    static func le32(_ value: UInt32) -> [UInt8] {
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
        bytes += Array(repeating: 0, count: size)
        return UInt32(truncatingIfNeeded: start)..<UInt32(truncatingIfNeeded: bytes.count)
    }

    mutating func put32(_ value: UInt32, at offset: Int) {
        bytes.replaceSubrange(offset..<offset + 4, with: GVDBFormat.le32(value))
    }

    /// `file_builder_add_hash`: the table's header, buckets and items, then for each item in
    /// order its name, then its value, child list or nested table.
    mutating func addHashTable(_ table: GVDBTableBuilder) throws -> Range<UInt32> {
        let items = table.items
        let bucketCount = items.count
        let hashes = items.map { djbHash($0.key.utf8) }

        // gvdb-builder's buckets: the GHashTable's visiting order, each item put at the head
        // of its bucket's list.
        var visit = GLibHashOrder()
        for (id, hash) in hashes.enumerated() { visit.insert(hash: hash, id: id) }
        var buckets = Array(repeating: [Int](), count: bucketCount)
        for id in visit.order {
            buckets[Int(hashes[id] % UInt32(bucketCount))].insert(id, at: 0)
        }
        let ordered = buckets.flatMap { $0 }
        var index = Array(repeating: 0, count: items.count)
        for (position, id) in ordered.enumerated() { index[id] = position }

        // Each directory's children, sorted by name as gvdb_item_set_parent keeps them.
        var children = Array(repeating: [Int](), count: items.count)
        var positions: [String: Int] = [:]
        for (id, item) in items.enumerated() { positions[item.key] = id }
        for (id, item) in items.enumerated() {
            guard let parent = item.parent else { continue }
            guard let parentID = positions[parent], case .directory = items[parentID].content else {
                throw GVDBError(.invalidInput, "the parent “\(parent)” of “\(item.key)” is not in the table as a directory: insert it with insertDirectory")
            }
            children[parentID].append(id)
        }
        for id in children.indices {
            children[id].sort { items[$0].key.utf8.lexicographicallyPrecedes(items[$1].key.utf8) }
        }

        let region = allocate(alignment: 4, size: 8 + 4 * bucketCount + GVDBFormat.itemSize * items.count)
        let start = Int(region.lowerBound)
        put32(GVDBFormat.bloomShift << 27, at: start)
        put32(UInt32(bucketCount), at: start + 4)
        var first = 0
        for (bucket, members) in buckets.enumerated() {
            put32(UInt32(first), at: start + 8 + 4 * bucket)
            first += members.count
        }
        let itemsStart = start + 8 + 4 * bucketCount
        for (position, id) in ordered.enumerated() {
            let item = items[id]
            let entry = itemsStart + GVDBFormat.itemSize * position
            put32(hashes[id], at: entry)
            let parentID = item.parent.flatMap { positions[$0] }
            put32(parentID.map { UInt32(index[$0]) } ?? GVDBFormat.noParent, at: entry + 4)
            let name = Array(item.key.utf8.dropFirst(item.parent?.utf8.count ?? 0))
            put32(UInt32(truncatingIfNeeded: bytes.count), at: entry + 8)
            bytes[entry + 12] = UInt8(truncatingIfNeeded: name.count)
            bytes[entry + 13] = UInt8(truncatingIfNeeded: name.count >> 8)
            bytes += name
            var pointer: Range<UInt32>?
            switch item.content {
            case .value(let value):
                bytes[entry + 14] = UInt8(ascii: "v")
                let variant = value.variantBytes
                let range = allocate(alignment: 8, size: variant.count)
                bytes.replaceSubrange(Int(range.lowerBound)..<Int(range.upperBound), with: variant)
                pointer = range
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
