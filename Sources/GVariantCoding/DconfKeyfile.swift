import CGIO

/// The keyfile `dconf dump PATH` prints and `dconf load PATH` reads: one group per directory
/// below `PATH` (`[org/gnome/desktop/interface]`, `[/]` for `PATH` itself), one line per key,
/// `key=GVariant text`.
public enum DconfKeyfile {
    /// One key of a keyfile: its full dconf key and its GVariant text.
    public struct Entry: Sendable, Hashable {
        /// The full key (`/org/gnome/desktop/interface/gtk-theme`).
        public let key: String
        /// Its value, GVariant text (`'Adwaita'`).
        public let text: String

        /// An entry.
        public init(key: String, text: String) {
            self.key = key
            self.text = text
        }
    }

    /// Checks that `path` is a dconf directory (`/`, `/org/gnome/`).
    public static func validate(directory path: String) throws(GVariantCodingError) {
        guard path.hasPrefix("/"), path.hasSuffix("/"), !path.contains("//") else { throw .notADirectory(path) }
    }

    /// The entries of `contents`, a keyfile dumped from the directory `path`, in file order.
    /// Values are taken raw, as `dconf load` takes them (GVariant text is one line).
    public static func entries(_ contents: String, under path: String) throws(GVariantCodingError) -> [Entry] {
        try validate(directory: path)
        let file = g_key_file_new()
        defer { g_key_file_free(file) }
        var error: UnsafeMutablePointer<GError>?
        guard g_key_file_load_from_data(file, contents, gsize(contents.utf8.count), G_KEY_FILE_NONE, &error) != 0 else {
            throw .keyfile(detail: take(error))
        }
        var entries: [Entry] = []
        for group in strings(g_key_file_get_groups(file, nil)) {
            let directory = group == "/" ? path : path + group.drop { $0 == "/" } + (group.hasSuffix("/") ? "" : "/")
            for key in strings(g_key_file_get_keys(file, group, nil, &error)) {
                guard let raw = g_key_file_get_value(file, group, key, &error) else { throw .keyfile(detail: take(error)) }
                defer { g_free(raw) }
                entries.append(Entry(key: directory + key, text: String(cString: raw)))
            }
            if error != nil { throw .keyfile(detail: take(error)) }
        }
        return entries
    }

    /// The keyfile of `entries`, all under the directory `path`, that `dconf load PATH`
    /// reads: groups and keys sorted, as `dconf dump` prints them.
    public static func render(_ entries: [Entry], under path: String) -> String {
        var groups: [String: [(String, String)]] = [:]
        for entry in entries where entry.key.hasPrefix(path) {
            let relative = entry.key.dropFirst(path.count)
            guard let slash = relative.lastIndex(of: "/") else {
                groups["/", default: []].append((String(relative), entry.text))
                continue
            }
            groups[String(relative[..<slash]), default: []].append((String(relative[relative.index(after: slash)...]), entry.text))
        }
        return groups.keys.sorted().map { group in
            "[\(group)]\n" + groups[group, default: []].sorted { $0.0 < $1.0 }.map { "\($0.0)=\($0.1)\n" }.joined()
        }.joined(separator: "\n")
    }

    private static func strings(_ list: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?) -> [String] {
        guard let list else { return [] }
        defer { g_strfreev(list) }
        var result: [String] = []
        var index = 0
        while let item = list[index] {
            result.append(String(cString: item))
            index += 1
        }
        return result
    }

    private static func take(_ error: UnsafeMutablePointer<GError>?) -> String {
        guard let error else { return "GLib gave no reason" }
        defer { g_error_free(error) }
        return String(cString: error.pointee.message)
    }
}
