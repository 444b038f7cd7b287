/// Serialises the one GVariant shape dconf-service's `ca.desrt.dconf.Writer.Change` takes: a
/// changeset `a{smv}` (key path → maybe-variant; Nothing resets the key), byte for byte as
/// GLib's `g_variant_get_data` gives it in normal form (GVariant serialisation, version 0).
///
/// The rules used (from the GVariant specification, "Serialisation"):
/// - a string is its UTF-8 bytes and a NUL; alignment 1, not fixed-size;
/// - a variant is the child's serialisation, a NUL, then the child's type string; alignment 8;
/// - a maybe of a non-fixed-size type: Nothing is empty, Just x is x followed by one 0 byte;
///   its alignment is the child's (8 for `mv`);
/// - a dict entry `{sT}` with a non-fixed key: key, padding to T's alignment, value, then
///   one framing offset (the end of the key); the entry's alignment is the largest of its
///   members' (8 here);
/// - an array of non-fixed-size elements: each element padded to the element alignment, then
///   one framing offset per element (its end), after the last element;
/// - framing offsets are little-endian, all of one width: the smallest of 1, 2, 4, 8 bytes with
///   which the container's whole size (content plus offsets) fits in an offset.
public enum GVariantChangeset {
    /// A value dconf can hold, as the variant inside Just.
    public enum Value: Sendable, Equatable {
        /// `i`
        case int32(Int32)
        /// `s`
        case string(String)
    }

    /// The serialised changeset: each (path, value) sets the key; a nil value resets it.
    public static func serialize(_ changes: [(path: String, value: Value?)]) -> [UInt8] {
        var out: [UInt8] = []
        var ends: [Int] = []
        for change in changes {
            pad(&out, to: 8)
            out += entry(path: change.path, value: change.value)
            ends.append(out.count)
        }
        appendOffsets(ends, to: &out)
        return out
    }

    /// `{smv}`: key, NUL, padding to 8, the maybe-variant, the key's end offset.
    static func entry(path: String, value: Value?) -> [UInt8] {
        var out = Array(path.utf8) + [0]
        let keyEnd = out.count
        if let value {
            pad(&out, to: 8)
            out += variant(value)
            out.append(0)  // Just of a non-fixed-size type
        }
        appendOffsets([keyEnd], to: &out)
        return out
    }

    /// `v`: the value, a NUL, its type string.
    static func variant(_ value: Value) -> [UInt8] {
        switch value {
        case .int32(let number):
            return withUnsafeBytes(of: number.littleEndian) { Array($0) } + [0] + Array("i".utf8)
        case .string(let text):
            return Array(text.utf8) + [0] + [0] + Array("s".utf8)
        }
    }

    static func pad(_ out: inout [UInt8], to alignment: Int) {
        while out.count % alignment != 0 { out.append(0) }
    }

    /// Appends `offsets` with the narrowest width in which the finished container's size fits.
    static func appendOffsets(_ offsets: [Int], to out: inout [UInt8]) {
        guard !offsets.isEmpty else { return }
        let width = offsetWidth(contentSize: out.count, offsets: offsets.count)
        for offset in offsets {
            for byte in 0..<width { out.append(UInt8(truncatingIfNeeded: offset >> (8 * byte))) }
        }
    }

    /// The framing offset width for a container of `contentSize` bytes and `offsets` offsets.
    public static func offsetWidth(contentSize: Int, offsets: Int) -> Int {
        for width in [1, 2, 4] where contentSize + offsets * width <= (1 << (8 * width)) - 1 {
            return width
        }
        return 8
    }
}
