import CGLib
import Dconf
import Testing

/// dconf's `a{smv}` changeset, checked byte for byte against bytes derived by hand from the
/// GVariant specification's serialisation rules (a string: its bytes and a NUL; a variant:
/// the child, a NUL, its type string, aligned to 8; Just of a non-fixed-size type: the child
/// and one 0 byte; a dict entry: key, padding to the value's alignment, value, the key's end
/// offset; an array of non-fixed-size elements: each element aligned, then each one's end
/// offset; offsets little-endian, of the narrowest width the container's size fits in).
@Suite("dconf's a{smv} changeset")
struct DconfChangesetTests {
    /// `{'/a': <int32 1>}`: "/a" NUL (3 bytes), padding to 8 (5 bytes), the variant (int32 1
    /// little-endian, NUL, "i": 6 bytes), the Just marker 0, the key's end offset 3: 16 bytes.
    /// The array appends the entry's end offset 16 (0x10) in one byte: 17 bytes.
    @Test func oneInt32Entry() {
        let bytes = DconfChangeset.serialized([("/a", g_variant_new_int32(1))])
        #expect(
            bytes == [
                0x2f, 0x61, 0x00, 0, 0, 0, 0, 0,
                0x01, 0x00, 0x00, 0x00, 0x00, 0x69, 0x00, 0x03,
                0x10,
            ])
    }

    /// A reset (Nothing) is the key, the padding to the empty value's alignment (it starts at
    /// 8 like any `mv`) and the key's offset: 9 bytes; the second entry starts 8-aligned.
    @Test func resetAndStringEntries() {
        let bytes = DconfChangeset.serialized([("/a", nil), ("/b", g_variant_new_string("x"))])
        let first: [UInt8] = [0x2f, 0x61, 0x00, 0, 0, 0, 0, 0, 0x03]
        // "/b" NUL, pad to 8, "x" NUL NUL "s" (a variant of a string), Just 0, key offset 3.
        let second: [UInt8] = [0x2f, 0x62, 0x00, 0, 0, 0, 0, 0, 0x78, 0x00, 0x00, 0x73, 0x00, 0x03]
        let ends: [UInt8] = [9, 16 + UInt8(second.count)]
        #expect(bytes == first + [0, 0, 0, 0, 0, 0, 0] + second + ends)
    }

    @Test func emptyChangesetIsEmpty() {
        #expect(DconfChangeset.serialized([]).isEmpty)
    }

    /// 1,000 entries (~25 KB) take 2-byte offsets; the last one is where the offset table starts.
    @Test func offsetsWidenWithTheContainer() {
        let big = DconfChangeset.serialized((0..<1000).map { ("/bench/k\($0)", g_variant_new_int32(Int32($0))) })
        let tableStart = big.count - 2 * 1000
        #expect(big.count > 255 && big.count < 65_536)
        #expect(Int(big[big.count - 2]) | Int(big[big.count - 1]) << 8 == tableStart)
    }

    /// A borrowed (non-floating) value is left to its owner, still valid after the call.
    @Test func borrowedValueStaysItsOwners() {
        let value = g_variant_take_ref(g_variant_new_string("kept"))!
        defer { g_variant_unref(value) }
        _ = DconfChangeset.serialized([("/k", value)])
        #expect(String(cString: g_variant_get_string(value, nil)) == "kept")
    }
}
