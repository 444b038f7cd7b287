/// A GVDB file, read: its root hash table, or a table nested in it.
///
/// Every offset, size and index the file holds is checked before it is followed, so a
/// damaged or hostile file gives a ``GVDBError``, never a crash or a read outside the bytes.
/// Lookups follow GLib's `gvdb-reader.c`: the key is hashed, its bucket searched and the
/// item's name checked back along its parents. Only little-endian files (the ones GLib writes
/// on little-endian machines, and dconf always) are read.
public struct GVDBFile: Sendable {
    /// A range of the file as GVDB stores it: start and end offsets, not yet checked.
    struct Pointer: Sendable {
        let start: UInt32
        let end: UInt32
    }

    /// One hash item, decoded.
    struct Item: Sendable {
        let hash: UInt32
        let parent: UInt32
        let keyStart: UInt32
        let keySize: UInt16
        let type: UInt8
        let start: UInt32
        let end: UInt32
    }

    /// The whole file.
    private let bytes: [UInt8]
    /// This table's buckets: each the index of its first item.
    private let buckets: [UInt32]
    /// This table's items.
    private let items: [Item]

    /// Reads the file `bytes`: its header and root table (the items are checked as they are
    /// used; ``validate()`` checks them all).
    public init(bytes: [UInt8]) throws {
        guard bytes.count >= GVDBFormat.headerSize else {
            throw GVDBError(.truncated, "the file has \(bytes.count) bytes, fewer than the 24 of a GVDB header: it is empty or cut short")
        }
        guard Array(bytes[0..<8]) == GVDBFormat.signature else {
            if Array(bytes[0..<8]) == Array("raVGtnai".utf8) {
                throw GVDBError(.badHeader, "the file is a big-endian GVDB file, which this reader does not read")
            }
            throw GVDBError(.badHeader, "the file does not start with GVDB's signature “GVariant”: it is not a GVDB database")
        }
        guard Self.le32(bytes, 8) == 0 else {
            throw GVDBError(.badHeader, "the file has GVDB version \(Self.le32(bytes, 8)), not 0")
        }
        try self.init(bytes: bytes, table: Pointer(start: Self.le32(bytes, 16), end: Self.le32(bytes, 20)), what: "the root table")
    }

    /// The table at `pointer` in `bytes`.
    private init(bytes: [UInt8], table pointer: Pointer, what: String) throws {
        self.bytes = bytes
        let region = try Self.dereference(bytes, pointer, alignment: 4, what: what)
        guard region.count >= 8 else {
            throw GVDBError(.truncated, "\(what) at offset \(pointer.start) has \(region.count) bytes, too few for a hash table header")
        }
        let start = region.lowerBound
        let bloomWords = Int(Self.le32(bytes, start) & ((1 << 27) - 1))
        let bucketCount = Int(Self.le32(bytes, start + 4))
        var rest = region.count - 8
        guard bloomWords <= rest / 4 else {
            throw GVDBError(.outOfBounds, "\(what) declares \(bloomWords) bloom filter words, more than its \(rest) bytes hold")
        }
        rest -= 4 * bloomWords
        guard bucketCount <= rest / 4 else {
            throw GVDBError(.outOfBounds, "\(what) declares \(bucketCount) buckets, more than its \(rest) bytes hold")
        }
        rest -= 4 * bucketCount
        guard rest % GVDBFormat.itemSize == 0 else {
            throw GVDBError(.badItem, "\(what) ends in \(rest % GVDBFormat.itemSize) bytes that are not a whole hash item")
        }
        let bucketsStart = start + 8 + 4 * bloomWords
        buckets = (0..<bucketCount).map { Self.le32(bytes, bucketsStart + 4 * $0) }
        let itemsStart = bucketsStart + 4 * bucketCount
        items = (0..<rest / GVDBFormat.itemSize).map { position in
            let entry = itemsStart + GVDBFormat.itemSize * position
            return Item(
                hash: Self.le32(bytes, entry), parent: Self.le32(bytes, entry + 4), keyStart: Self.le32(bytes, entry + 8),
                keySize: UInt16(bytes[entry + 12]) | UInt16(bytes[entry + 13]) << 8, type: bytes[entry + 14],
                start: Self.le32(bytes, entry + 16), end: Self.le32(bytes, entry + 20))
        }
    }

    /// The number of items of this table (names of every kind).
    public var count: Int { items.count }

    /// Every name of this table, in the order of its items, as `gvdb_table_get_names` builds
    /// them (each item's name after its parent's). Throws if an item's name lies outside the
    /// file, is not UTF-8, or its parents loop or never reach a root.
    public func names() throws -> [String] {
        try nameBytes().enumerated().map { position, name in
            guard let name else {
                // Its own name outside the file is the first thing wrong with it, if it is.
                _ = try key(of: items[position], at: position)
                throw GVDBError(.badItem, "item \(position) has no name: its parent \(items[position].parent) is missing, out of range or part of a loop")
            }
            guard let text = String(validating: name, as: UTF8.self) else {
                throw GVDBError(.badItem, "the name of item \(position) is not UTF-8")
            }
            return text
        }
    }

    /// Every value item of this table whose name can be built, in the order of its items, as
    /// `gvdb_table_get_names` and `gvdb_table_get_value` find them: its name and the bytes it
    /// stores (a serialised variant, `v`, not looked into), or why they cannot be had. An
    /// item whose name cannot be built (it lies outside the file, is not UTF-8, or its
    /// parents loop or never reach a root) is left out, as GLib leaves it out; the damage of
    /// one item costs that item alone. Throws only when the names nest deeper than any
    /// database holds.
    public func valueItems() throws -> [(name: String, variant: Result<ArraySlice<UInt8>, GVDBError>)] {
        try nameBytes().enumerated().compactMap { position, name in
            let item = items[position]
            guard item.type == UInt8(ascii: "v"), let name, let text = String(validating: name, as: UTF8.self) else { return nil }
            do {
                let region = try Self.dereference(bytes, Pointer(start: item.start, end: item.end), alignment: 8, what: "the value of “\(text)”")
                return (text, .success(bytes[region]))
            } catch let error as GVDBError {
                return (text, .failure(error))
            } catch {
                return (text, .failure(GVDBError(.badItem, "the value of “\(text)”: \(error)")))
            }
        }
    }

    /// The name of every item, as bytes, in the order of the items; `nil` for an item whose
    /// name cannot be built (it lies outside the file, or its parents loop or never reach a
    /// root). Throws when the names nest deeper than any database holds.
    private func nameBytes() throws -> [[UInt8]?] {
        var names = [[UInt8]?](repeating: nil, count: items.count)
        // Names repeat their parents' names: a hostile file could nest items so deeply that
        // building them all would take quadratic memory. dconf's names are short and shallow.
        let budget = 64 * bytes.count + 4096
        var spent = 0
        var total = 0
        var filled = 0
        repeat {
            filled = 0
            for (position, item) in items.enumerated() where names[position] == nil {
                guard let own = try? key(of: item, at: position) else { continue }
                if item.parent == GVDBFormat.noParent {
                    names[position] = own
                } else if item.parent < items.count, let parentName = names[Int(item.parent)] {
                    let name = parentName + own
                    spent += name.count
                    guard spent <= budget else {
                        throw GVDBError(.badItem, "the names of the items nest deeper than any database holds (item \(position)): the file is damaged")
                    }
                    names[position] = name
                } else {
                    continue
                }
                filled += 1
            }
            total += filled
        } while filled > 0 && total < items.count
        return names
    }

    /// The value named `key`, or nil when there is none.
    public func value(forKey key: String) throws -> GVDBValue? {
        guard let item = lookup(key, type: UInt8(ascii: "v")) else { return nil }
        return try value(of: item, named: key)
    }

    /// Whether a value is named `key` (as `gvdb_table_has_value`: its data lies in the file).
    public func hasValue(_ key: String) -> Bool {
        guard let item = lookup(key, type: UInt8(ascii: "v")) else { return false }
        return (try? Self.dereference(bytes, Pointer(start: item.start, end: item.end), alignment: 8, what: key)) != nil
    }

    /// The names listed in the directory `key` (each after the directory's own name, in the
    /// order stored), or nil when `key` is no directory, as `gvdb_table_list`.
    public func list(_ key: String) throws -> [String]? {
        guard let item = lookup(key, type: UInt8(ascii: "L")) else { return nil }
        let region = try Self.dereference(bytes, Pointer(start: item.start, end: item.end), alignment: 4, what: "the list of “\(key)”")
        guard region.count % 4 == 0 else {
            throw GVDBError(.badItem, "the list of “\(key)” is \(region.count) bytes long, not a whole number of 4-byte indices")
        }
        return try stride(from: region.lowerBound, to: region.upperBound, by: 4).map { offset in
            let child = Self.le32(bytes, offset)
            guard child < items.count else {
                throw GVDBError(.outOfBounds, "the list of “\(key)” names item \(child), but the table has \(items.count)")
            }
            let name = try self.key(of: items[Int(child)], at: Int(child))
            guard let text = String(validating: name, as: UTF8.self) else {
                throw GVDBError(.badItem, "the name of item \(child) is not UTF-8")
            }
            return text
        }
    }

    /// The hash table nested under `key`, or nil when there is none.
    public func table(forKey key: String) throws -> GVDBFile? {
        guard let item = lookup(key, type: UInt8(ascii: "H")) else { return nil }
        return try GVDBFile(bytes: bytes, table: Pointer(start: item.start, end: item.end), what: "the table “\(key)”")
    }

    /// Every value of this table by name (an item whose name is taken twice gives the first).
    package func keyedValues() throws -> [String: GVDBValue] {
        var values: [String: GVDBValue] = [:]
        for (position, name) in try names().enumerated() where items[position].type == UInt8(ascii: "v") && values[name] == nil {
            values[name] = try value(of: items[position], named: name)
        }
        return values
    }

    /// Checks every item of this table and of the tables nested in it: names, parents,
    /// values, lists, and that each name is found again by a lookup. Throws the first damage.
    public func validate() throws {
        try validate(depth: 0)
    }

    /// ``validate()`` for a table nested `depth` deep: tables that nest each other (or
    /// themselves) end at a depth no real file reaches.
    private func validate(depth: Int) throws {
        guard depth < 16 else {
            throw GVDBError(.badItem, "hash tables nest more than 16 deep: a table of the file contains itself")
        }
        let names = try names()
        for (position, item) in items.enumerated() {
            let name = names[position]
            switch item.type {
            case UInt8(ascii: "v"):
                _ = try value(of: item, named: name)
            case UInt8(ascii: "L"):
                _ = try list(name)
            case UInt8(ascii: "H"):
                try table(forKey: name)?.validate(depth: depth + 1)
            case 0:
                guard item.start == 0, item.end == 0 else {
                    throw GVDBError(.badItem, "the item “\(name)” has no type but points at data")
                }
            default:
                throw GVDBError(.badItem, "the item “\(name)” has the unknown type \(item.type)")
            }
            guard item.type == 0 || lookup(name, type: item.type) != nil else {
                throw GVDBError(.badItem, "the item “\(name)” is not where its hash puts it: its bucket or hash is wrong")
            }
        }
    }

    // MARK: Reading items

    /// The name bytes of `item` (after its parent's).
    private func key(of item: Item, at position: Int) throws -> [UInt8] {
        let start = Int(item.keyStart)
        let end = start + Int(item.keySize)
        guard end <= bytes.count else {
            throw GVDBError(.outOfBounds, "the name of item \(position) lies at offsets \(start)..<\(end), past the end of the \(bytes.count)-byte file")
        }
        return Array(bytes[start..<end])
    }

    /// The value of `item`, a serialised variant.
    private func value(of item: Item, named name: String) throws -> GVDBValue {
        let region = try Self.dereference(bytes, Pointer(start: item.start, end: item.end), alignment: 8, what: "the value of “\(name)”")
        do {
            return try GVDBValue(variantBytes: bytes[region])
        } catch let error as GVDBError {
            throw GVDBError(error.kind, "“\(name)”: \(error.message)")
        }
    }

    /// `gvdb_table_lookup`: the item named `key` of type `type`.
    private func lookup(_ key: String, type: UInt8) -> Item? {
        guard !buckets.isEmpty, !items.isEmpty else { return nil }
        let name = Array(key.utf8)
        let hash = djbHash(name)
        let bucket = Int(hash % UInt32(buckets.count))
        var itemNumber = Int(buckets[bucket])
        var last = items.count
        if bucket + 1 < buckets.count, Int(buckets[bucket + 1]) <= items.count {
            last = Int(buckets[bucket + 1])
        }
        while itemNumber < last {
            let item = items[itemNumber]
            if item.hash == hash, item.type == type, checkName(item, name[...]) { return item }
            itemNumber += 1
        }
        return nil
    }

    /// `gvdb_table_check_name`: whether `item`'s name, with its parents', is `name`. Each step
    /// consumes at least one byte, so a loop of parents ends.
    private func checkName(_ item: Item, _ name: ArraySlice<UInt8>) -> Bool {
        var item = item
        var remaining = name
        while true {
            let start = Int(item.keyStart)
            let size = Int(item.keySize)
            guard start + size <= bytes.count, size <= remaining.count else { return false }
            guard bytes[start..<start + size].elementsEqual(remaining.suffix(size)) else { return false }
            remaining = remaining.dropLast(size)
            if remaining.isEmpty, item.parent == GVDBFormat.noParent { return true }
            guard item.parent < items.count, size > 0 else { return false }
            item = items[Int(item.parent)]
        }
    }

    /// The range `pointer` of `bytes`, checked: in order, inside the file, aligned.
    private static func dereference(_ bytes: [UInt8], _ pointer: Pointer, alignment: Int, what: String) throws -> Range<Int> {
        let start = Int(pointer.start)
        let end = Int(pointer.end)
        guard start <= end else {
            throw GVDBError(.outOfBounds, "\(what) starts at offset \(start), after its end \(end)")
        }
        guard end <= bytes.count else {
            throw GVDBError(.outOfBounds, "\(what) lies at offsets \(start)..<\(end), past the end of the \(bytes.count)-byte file")
        }
        guard start % alignment == 0 else {
            throw GVDBError(.badItem, "\(what) starts at offset \(start), not a multiple of \(alignment)")
        }
        return start..<end
    }

    /// The little-endian 32-bit word at `offset` (the caller has checked it lies in `bytes`).
    private static func le32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
    }
}
