import GVDB

/// A dconf database held in memory and changed key by key, whose file is laid out anew in
/// time linear in its size: what a writer that rewrites the whole file after every change
/// (prefsd's mirror of dconf's user database) keeps between two writes.
///
/// Its file holds what ``DconfDatabaseFile/file(_:locks:annotations:)`` stores for the same
/// keys and annotations (every key; every directory above a key, listing its children sorted
/// by name; each item under its name after its parent's), and dconf reads the two alike;
/// but the bytes are not dconf-service's: items are laid out bucket by bucket of GVDB's hash
/// table, by hash and name within a bucket, not in the order GLib's hash tables visit them,
/// which would take playing out dconf-service's history. The bytes depend on the content
/// alone, not on the order of the changes that made it.
///
/// Each value is kept already serialised as the variant GVDB stores, each directory with its
/// children already sorted, so laying out the file copies bytes and sorts nothing but the
/// few items sharing a hash bucket.
public struct DconfDatabaseBuilder: Sendable {
    /// One item of the file: a key, a directory or an annotation.
    struct Node: Sendable {
        /// The full name's UTF-8 bytes; empty for a slot not in use.
        var name: [UInt8]
        /// ``djbHash(_:)`` of the name, as GVDB's readers hash it.
        var hash: UInt32
        /// The slot of the directory holding it; -1 for `/` and annotations, which have none.
        var parent: Int
        /// A key's or annotation's value as GVDB stores it (a serialised `v`); nil for a directory.
        var variant: [UInt8]?
        /// A directory's children, by slot, sorted by name.
        var children: [Int]
    }

    /// The items, by slot; a slot whose name is empty is free.
    private(set) var nodes: [Node] = []
    /// The free slots, reused before new ones.
    private var free: [Int] = []
    /// Each item's slot, by name.
    private var slots: [String: Int] = [:]

    /// An empty database (its file holds no item).
    public init() {}

    /// The number of items the file holds: keys, directories and annotations.
    public var itemCount: Int { slots.count }

    /// Sets `key` to `value`, or removes it when `value` is nil (and with it the directories
    /// it leaves empty). Throws, changing nothing, if `key` is not a dconf key or a part of
    /// it passes GVDB's 65535 bytes.
    public mutating func setValue(_ value: GVDBValue?, forKey key: String) throws {
        if let reason = DconfPath.whyNotKey(key) { throw GVDBError(.invalidInput, DconfFormatError.notAKey(key, reason: reason).description) }
        guard let value else {
            if let slot = slots[key] { remove(slot) }
            return
        }
        // Each item is stored under the part of its name after its parent's: a directory's
        // last component and its slash, or the key's last component.
        var component = 0
        for byte in key.utf8 {
            component = byte == UInt8(ascii: "/") ? 0 : component + 1
            guard component < Int(UInt16.max) else {
                throw GVDBError(.invalidInput, "a part of the key “\(key.prefix(64))…” is longer than GVDB's 65535 bytes")
            }
        }
        if let slot = slots[key] {
            nodes[slot].variant = value.variantBytes
            return
        }
        guard let parentName = DconfPath.parent(of: key) else { return }
        let parent = directory(parentName)
        add(key, parent: parent, variant: value.variantBytes)
    }

    /// Sets the annotation `name` to `value`, or removes it when `value` is nil: an item at
    /// the root whose name is not a dconf key (it starts with “.”), so that dconf's clients
    /// never see it. Throws, changing nothing, if `name` does not start with “.” or passes
    /// GVDB's 65535 bytes.
    public mutating func setAnnotation(_ value: GVDBValue?, named name: String) throws {
        guard name.utf8.first == UInt8(ascii: "."), name.utf8.count <= Int(UInt16.max) else {
            throw GVDBError(
                .invalidInput, "“\(name.prefix(64))” cannot annotate a dconf database: an annotation's name starts with “.” and has at most 65535 bytes")
        }
        // No key or directory starts with “.”: a name that does is an annotation.
        if let slot = slots[name] {
            if let value { nodes[slot].variant = value.variantBytes } else { remove(slot) }
        } else if let value {
            add(name, parent: -1, variant: value.variantBytes)
        }
    }

    /// The slot of the directory `name`, made (with the directories above it) if missing.
    private mutating func directory(_ name: String) -> Int {
        if let slot = slots[name] { return slot }
        let parent = DconfPath.parent(of: name).map { directory($0) } ?? -1
        return add(name, parent: parent, variant: nil)
    }

    /// Adds the item `name` below the directory in slot `parent` (-1: none); its slot.
    @discardableResult
    private mutating func add(_ name: String, parent: Int, variant: [UInt8]?) -> Int {
        let bytes = Array(name.utf8)
        let node = Node(name: bytes, hash: djbHash(bytes), parent: parent, variant: variant, children: [])
        let slot: Int
        if let reused = free.popLast() {
            slot = reused
            nodes[slot] = node
        } else {
            slot = nodes.count
            nodes.append(node)
        }
        slots[name] = slot
        if parent >= 0 {
            let place = childIndex(of: bytes, in: parent)
            nodes[parent].children.insert(slot, at: place)
        }
        return slot
    }

    /// Removes the item in `slot`, and its directory if that is left empty.
    private mutating func remove(_ slot: Int) {
        let name = nodes[slot].name
        let parent = nodes[slot].parent
        // Out of its directory first: finding it there compares its name.
        if parent >= 0 { nodes[parent].children.remove(at: childIndex(of: name, in: parent)) }
        slots[String(decoding: name, as: UTF8.self)] = nil
        nodes[slot] = Node(name: [], hash: 0, parent: -1, variant: nil, children: [])
        free.append(slot)
        if parent >= 0, nodes[parent].children.isEmpty { remove(parent) }
    }

    /// Where `name` is or belongs among the children of the directory in slot `parent`
    /// (sorted by name, as gvdb-builder lists them).
    private func childIndex(of name: [UInt8], in parent: Int) -> Int {
        let children = nodes[parent].children
        var low = 0
        var high = children.count
        while low < high {
            let middle = (low + high) / 2
            if nodes[children[middle]].name.lexicographicallyPrecedes(name) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
