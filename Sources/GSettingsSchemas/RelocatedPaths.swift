/// Which relocatable schema describes a directory of stored keys that no fixed schema
/// covers. A relocatable schema names no path, so the directory alone cannot tell; two
/// rules, the first that answers wins:
///
/// 1. **Known places.** Well-known applications put their relocatable schemas at paths of
///    a fixed shape, one directory per instance (a profile's UUID, a keybinding's name);
///    ``knownPlaces`` lists them, `*` standing for that one directory. A place counts only
///    when its schema is installed.
/// 2. **The keys present.** Otherwise the relocatable schema that declares every key stored
///    in the directory; when several do, the one with the fewest keys (the closest fit); when
///    none or two equally close do, no schema (the keys stay in the raw editor).
public enum RelocatedPaths {
    /// Path patterns (`*`: one directory) and the relocatable schema used there.
    public static let knownPlaces: [(pattern: String, schema: String)] = [
        ("/org/gnome/terminal/legacy/profiles:/:*/", "org.gnome.Terminal.Legacy.Profile"),
        ("/org/gnome/settings-daemon/plugins/media-keys/custom-keybindings/*/", "org.gnome.settings-daemon.plugins.media-keys.custom-keybinding"),
        ("/org/gnome/desktop/app-folders/folders/*/", "org.gnome.desktop.app-folders.folder"),
        ("/org/gnome/desktop/notifications/application/*/", "org.gnome.desktop.notifications.application"),
        ("/org/gnome/desktop/peripherals/touchscreens/*/", "org.gnome.desktop.peripherals.touchscreen"),
        ("/org/gnome/desktop/peripherals/tablets/*/", "org.gnome.desktop.peripherals.tablet"),
        ("/org/gnome/settings-daemon/plugins/sharing/*/", "org.gnome.settings-daemon.plugins.sharing.service"),
        ("/org/gnome/Ptyxis/Profiles/*/", "org.gnome.Ptyxis.Profile"),
    ]

    /// The relocatable schema of `source` for the directory `path` (ending in `/`) holding
    /// the keys `keyNames`, by the rules above; `nil` when none fits.
    public static func schema(for path: String, keyNames: Set<String>, in source: SchemaSource) -> Schema? {
        for place in knownPlaces where matches(path, place.pattern) {
            if let schema = source.relocatable[place.schema] { return schema }
        }
        let fitting = source.relocatable.values.filter { schema in keyNames.allSatisfy { schema.keysByName[$0] != nil } }
        guard let fewest = fitting.map(\.keys.count).min() else { return nil }
        let closest = fitting.filter { $0.keys.count == fewest }
        return closest.count == 1 ? closest[0] : nil
    }

    /// Whether `path` has the shape of `pattern`, each `*` standing for one non-empty
    /// directory name; text around a `*` in the same directory must match too (`:*`).
    public static func matches(_ path: String, _ pattern: String) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        let wanted = pattern.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == wanted.count else { return false }
        for (part, want) in zip(parts, wanted) {
            if let star = want.firstIndex(of: "*") {
                let prefix = want[..<star], suffix = want[want.index(after: star)...]
                guard part.count > prefix.count + suffix.count, part.hasPrefix(prefix), part.hasSuffix(suffix) else { return false }
            } else if part != want {
                return false
            }
        }
        return true
    }
}
