/// A GVariant written as text, with what GLib makes of it: its type string, its serialised
/// bytes (normal form, little-endian) and its text as GLib prints it with types
/// (`g_variant_print (value, TRUE)`, what `dconf read` prints).
public struct GLibVariant: Sendable {
    /// Its GVariant type string.
    public let typeString: String
    /// Its serialised bytes, as GLib lays them out.
    public let bytes: [UInt8]
    /// Its text as GLib prints it, type annotated.
    public let printed: String

    /// Each `(type, text)` parsed by GLib itself (PyGObject, one `python3` for them all).
    public static func parse(_ texts: [(type: String, text: String)]) throws -> [GLibVariant] {
        let script = """
            import sys
            from gi.repository import GLib
            args = sys.argv[1:]
            for type_string, text in zip(args[0::2], args[1::2]):
                v = GLib.Variant.parse(GLib.VariantType(type_string), text, None, None)
                print(v.get_type_string() + "\\t" + v.get_data_as_bytes().get_data().hex() + "\\t" + v.print_(True))
            """
        let result = try runCommand("/usr/bin/python3", ["-c", script] + texts.flatMap { [$0.type, $0.text] })
        guard result.status == 0 else {
            throw BusTestSupportError.processFailed("PyGObject could not serialise the test values (install python3-gi): \(result.stderr)")
        }
        return try result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map { line in
            let fields = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 3 else { throw BusTestSupportError.processFailed("unexpected line from python3: \(line)") }
            return GLibVariant(typeString: fields[0], bytes: hexBytes(fields[1]), printed: fields[2])
        }
    }

    /// The bytes of the hexadecimal text `hex`.
    private static func hexBytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count - 1, by: 2).compactMap { UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16) }
    }
}
