import CGLib
import DconfFormats

/// A change dconf's writer is asked for (`ca.desrt.dconf.Writer.Change`): the serialised
/// `a{smv}` dconf's engine sends, read as dconf-service reads it: each dconf key with the
/// value to set it to, or reset; a directory (a path ending in `/`) with nothing resets
/// every key under it.
public struct DconfChangeset: Sendable, Hashable {
    /// One entry of a changeset.
    public enum Entry: Sendable, Hashable {
        /// Sets the key (`/org/gnome/desktop/interface/gtk-theme`) to the value.
        case set(key: String, value: DconfValue)
        /// Resets (removes) the key.
        case reset(key: String)
        /// Resets every key under the directory (`/org/gnome/`; `/` for all).
        case resetDirectory(String)
    }

    /// The entries, in the order of the serialised dictionary; no path appears twice.
    public let entries: [Entry]

    /// Reads the serialised changeset `bytes`.
    /// - Throws: ``DconfError`` when the bytes are not an `a{smv}` in GVariant's normal form,
    ///   a path is neither a dconf key nor a directory, a directory is given a value, or a
    ///   path appears twice.
    public init(serialised bytes: [UInt8]) throws(DconfError) {
        let data = bytes.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
        defer { g_bytes_unref(data) }
        let changeset = g_variant_take_ref(g_variant_new_from_bytes(OpaquePointer(("a{smv}" as StaticString).utf8Start), data, 0))!
        defer { g_variant_unref(changeset) }
        guard g_variant_is_normal_form(changeset) != 0 else {
            throw DconfError("the changeset is not a serialised a{smv} in GVariant's normal form")
        }
        var entries: [Entry] = []
        var seen: Set<String> = []
        for index in 0..<Int(g_variant_n_children(changeset)) {
            let entry = g_variant_get_child_value(changeset, gsize(index))!
            defer { g_variant_unref(entry) }
            let pathVariant = g_variant_get_child_value(entry, 0)!
            let path = String(cString: g_variant_get_string(pathVariant, nil))
            g_variant_unref(pathVariant)
            let maybe = g_variant_get_child_value(entry, 1)!
            defer { g_variant_unref(maybe) }
            let boxed = g_variant_get_maybe(maybe)
            defer { if let boxed { g_variant_unref(boxed) } }
            guard seen.insert(path).inserted else { throw DconfError("the changeset names \(path) twice") }
            if DconfPath.isKey(path) {
                if let boxed {
                    let inner = g_variant_get_variant(boxed)!
                    defer { g_variant_unref(inner) }
                    entries.append(.set(key: path, value: DconfValue(variant: inner)))
                } else {
                    entries.append(.reset(key: path))
                }
            } else if DconfPath.isDirectory(path) {
                guard boxed == nil else { throw DconfError("the changeset sets the directory \(path) to a value; only keys hold values") }
                entries.append(.resetDirectory(path))
            } else {
                throw DconfError(
                    "the changeset names \(path.debugDescription), which is neither a dconf key nor a directory: a dconf path \(DconfPath.whyNotKey(path) ?? "")"
                )
            }
        }
        self.entries = entries
    }
}

extension DconfChangeset {
    /// The changeset in words, one entry a line: `KEY = VALUE` (GVariant text), `KEY reset`,
    /// `DIRECTORY reset`.
    public var text: String {
        entries.map { entry in
            switch entry {
            case .set(let key, let value): "\(key) = \(value.text)"
            case .reset(let key): "\(key) reset"
            case .resetDirectory(let directory): "\(directory) reset"
            }
        }.joined(separator: "\n")
    }
}
