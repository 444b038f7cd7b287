/// dconf's path rules, as dconf's own `common/dconf-paths.c` has them: a path starts with
/// `/` and has no `//`; a key is a path that does not end with `/`
/// (`/org/gnome/desktop/interface/gtk-theme`), a directory one that does (`/org/gnome/`,
/// and `/` itself). dconf's paths are C strings: none holds a zero byte.
public enum DconfPath {
    /// Whether `path` is a dconf key, as `dconf_is_key` decides.
    public static func isKey(_ path: String) -> Bool {
        whyNotKey(path) == nil
    }

    /// Whether `path` is a dconf directory, as `dconf_is_dir` decides.
    public static func isDirectory(_ path: String) -> Bool {
        whyNotDirectory(path) == nil
    }

    /// Throws unless `path` is a dconf key.
    /// - Throws: ``DconfFormatError/notAKey(_:reason:)``, saying which rule it breaks.
    public static func checkKey(_ path: String) throws(DconfFormatError) {
        if let reason = whyNotKey(path) { throw .notAKey(path, reason: reason) }
    }

    /// Throws unless `path` is a dconf directory.
    /// - Throws: ``DconfFormatError/notADirectory(_:reason:)``, saying which rule it breaks.
    public static func checkDirectory(_ path: String) throws(DconfFormatError) {
        if let reason = whyNotDirectory(path) { throw .notADirectory(path, reason: reason) }
    }

    /// Which rule `path` breaks to be a dconf key, in the words of dconf's own messages
    /// (`must not end with a slash`); nil for a key.
    public static func whyNotKey(_ path: String) -> String? {
        whyNotPath(path) ?? (path.utf8.last == UInt8(ascii: "/") ? "must not end with a slash" : nil)
    }

    /// Which rule `path` breaks to be a dconf directory (`must end with a slash`); nil for
    /// a directory.
    public static func whyNotDirectory(_ path: String) -> String? {
        whyNotPath(path) ?? (path.utf8.last == UInt8(ascii: "/") ? nil : "must end with a slash")
    }

    /// The directory holding `path` (`/a/b/` for `/a/b/c` and for `/a/b/c/`), nil for `/`.
    static func parent(of path: String) -> String? {
        var bytes = Array(path.utf8)
        guard bytes.count > 1 else { return nil }
        if bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
        while let last = bytes.last, last != UInt8(ascii: "/") { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Which rule of every dconf path `path` breaks (`dconf_is_path`); nil for a path.
    private static func whyNotPath(_ path: String) -> String? {
        let bytes = path.utf8
        if bytes.first != UInt8(ascii: "/") { return "must begin with a slash" }
        if zip(bytes, bytes.dropFirst()).contains(where: { $0 == UInt8(ascii: "/") && $1 == UInt8(ascii: "/") }) {
            return "must not contain two consecutive slashes"
        }
        if bytes.contains(0) { return "must not contain a zero byte" }
        return nil
    }
}
