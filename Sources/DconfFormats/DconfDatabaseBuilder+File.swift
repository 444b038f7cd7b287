import GVDB

extension DconfDatabaseBuilder {
    /// The bytes of the database's GVDB file (little-endian): the header, the root hash
    /// table (one bucket per item, as gvdb-builder sizes it; no bloom filter), then item by
    /// item its name after its parent's and its value (a serialised `v`, 8-byte aligned) or
    /// its children's positions (4-byte aligned). Throws if the file would pass 4 GiB.
    public func file() throws -> [UInt8] {
        try nodes.withUnsafeBufferPointer { try Self.file(of: $0, count: itemCount) }
    }

    /// The file of the items `nodes` (slots, free ones with an empty name), `count` of them in use.
    private static func file(of nodes: UnsafeBufferPointer<Node>, count: Int) throws -> [UInt8] {
        let buckets = UInt32(max(count, 1))

        // The items bucket by bucket (a name's bucket is its hash modulo the number of
        // buckets), by hash then name within a bucket, so that the bytes depend on the
        // content alone.
        var bucketStarts = [Int](repeating: 0, count: count + 1)
        for node in nodes where !node.name.isEmpty { bucketStarts[Int(node.hash % buckets) + 1] += 1 }
        for bucket in 0..<count { bucketStarts[bucket + 1] += bucketStarts[bucket] }
        var order = [Int](repeating: 0, count: count)
        var next = bucketStarts
        for slot in nodes.indices where !nodes[slot].name.isEmpty {
            let bucket = Int(nodes[slot].hash % buckets)
            order[next[bucket]] = slot
            next[bucket] += 1
        }
        func precedes(_ a: Int, _ b: Int) -> Bool {
            nodes[a].hash != nodes[b].hash ? nodes[a].hash < nodes[b].hash : nodes[a].name.lexicographicallyPrecedes(nodes[b].name)
        }
        for bucket in 0..<count where bucketStarts[bucket + 1] - bucketStarts[bucket] > 1 {
            // Buckets hold few items: an insertion sort.
            for index in bucketStarts[bucket] + 1..<bucketStarts[bucket + 1] {
                let slot = order[index]
                var place = index
                while place > bucketStarts[bucket], precedes(slot, order[place - 1]) {
                    order[place] = order[place - 1]
                    place -= 1
                }
                order[place] = slot
            }
        }
        var position = [UInt32](repeating: GVDBFormat.noParent, count: nodes.count)
        for (index, slot) in order.enumerated() { position[slot] = UInt32(truncatingIfNeeded: index) }

        // Where each item's name and content go, after the header and the table.
        let tableStart = GVDBFormat.headerSize
        let itemsStart = tableStart + 8 + 4 * count
        let tableEnd = itemsStart + GVDBFormat.itemSize * count
        var nameStarts = [Int](repeating: 0, count: count)
        var contentStarts = [Int](repeating: 0, count: count)
        var size = tableEnd
        for (index, slot) in order.enumerated() {
            let parent = nodes[slot].parent
            nameStarts[index] = size
            size += nodes[slot].name.count - (parent < 0 ? 0 : nodes[parent].name.count)
            if let variantCount = nodes[slot].variant?.count {
                size = (size + 7) & ~7
                contentStarts[index] = size
                size += variantCount
            } else {
                size = (size + 3) & ~3
                contentStarts[index] = size
                size += 4 * nodes[slot].children.count
            }
        }
        guard size <= Int(UInt32.max) else {
            throw GVDBError(.invalidInput, "the file would be \(size) bytes: GVDB's offsets are 32-bit, so store fewer or smaller values")
        }

        var bytes = [UInt8](repeating: 0, count: size)
        bytes.withUnsafeMutableBytes { out in
            func put32(_ value: UInt32, at offset: Int) {
                out.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self)
            }
            func copy(_ source: ArraySlice<UInt8>, to offset: Int) {
                source.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[offset..<offset + $0.count]).copyMemory(from: $0) }
            }
            copy(GVDBFormat.signature[...], to: 0)
            put32(UInt32(tableStart), at: 16)
            put32(UInt32(tableEnd), at: 20)
            put32(GVDBFormat.bloomShift << 27, at: tableStart)
            put32(UInt32(truncatingIfNeeded: count), at: tableStart + 4)
            for bucket in 0..<count {
                put32(UInt32(truncatingIfNeeded: bucketStarts[bucket]), at: tableStart + 8 + 4 * bucket)
            }
            for (index, slot) in order.enumerated() {
                let entry = itemsStart + GVDBFormat.itemSize * index
                let parent = nodes[slot].parent
                let parentLength = parent < 0 ? 0 : nodes[parent].name.count
                let nameLength = nodes[slot].name.count - parentLength
                put32(nodes[slot].hash, at: entry)
                put32(parent < 0 ? GVDBFormat.noParent : position[parent], at: entry + 4)
                put32(UInt32(truncatingIfNeeded: nameStarts[index]), at: entry + 8)
                out[entry + 12] = UInt8(truncatingIfNeeded: nameLength)
                out[entry + 13] = UInt8(truncatingIfNeeded: nameLength >> 8)
                copy(nodes[slot].name[parentLength...], to: nameStarts[index])
                let start = contentStarts[index]
                let end: Int
                if let variant = nodes[slot].variant {
                    out[entry + 14] = UInt8(ascii: "v")
                    copy(variant[...], to: start)
                    end = start + variant.count
                } else {
                    out[entry + 14] = UInt8(ascii: "L")
                    let children = nodes[slot].children
                    for child in children.indices {
                        put32(position[children[child]], at: start + 4 * child)
                    }
                    end = start + 4 * children.count
                }
                put32(UInt32(truncatingIfNeeded: start), at: entry + 16)
                put32(UInt32(truncatingIfNeeded: end), at: entry + 20)
            }
        }
        return bytes
    }
}
