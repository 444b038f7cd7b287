/// The directories GLib's default schema source reads compiled schemas from
/// (`gschemas.compiled` in each) for a process's environment, the one that wins first:
/// each directory of `$GSETTINGS_SCHEMA_DIR` (`:`-separated), then
/// `$XDG_DATA_HOME/glib-2.0/schemas` (`$HOME/.local/share` when unset), then each
/// `$XDG_DATA_DIRS` directory's `glib-2.0/schemas` (`/usr/local/share:/usr/share` when unset).
public enum SchemaDirectories {
    /// The directories for `environment`, highest precedence first, each once.
    public static func glib(environment: [String: String]) -> [String] {
        var directories: [String] = []
        directories += list(environment["GSETTINGS_SCHEMA_DIR"])
        if let home = nonEmpty(environment["XDG_DATA_HOME"]) ?? nonEmpty(environment["HOME"]).map({ $0 + "/.local/share" }) {
            directories.append(schemas(in: home))
        }
        let system = list(environment["XDG_DATA_DIRS"])
        directories += (system.isEmpty ? ["/usr/local/share", "/usr/share"] : system).map(schemas(in:))
        var seen: Set<String> = []
        return directories.filter { seen.insert($0).inserted }
    }

    /// The schema directory of the data directory `data`.
    private static func schemas(in data: String) -> String {
        (data.hasSuffix("/") ? String(data.dropLast()) : data) + "/glib-2.0/schemas"
    }

    /// The non-empty parts of a `:`-separated list.
    private static func list(_ value: String?) -> [String] {
        (value ?? "").split(separator: ":").map(String.init)
    }

    private static func nonEmpty(_ value: String?) -> String? {
        value.flatMap { $0.isEmpty ? nil : $0 }
    }
}
