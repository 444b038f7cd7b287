#if canImport(PreferencesModel)
    import PreferencesModel
#endif

/// Where a GSettings key lives in prefsd: one reversible rule from a GSettings path and key
/// (`/org/gnome/TextEditor/style-scheme`) to a prefsd domain and key, and back.
///
/// **The rule.** Split the full key at `/` into directories and the key name. The domain is
/// made of the leading directories, at most three, that are *plain* (a letter or digit
/// followed by letters, digits, `_` or `-`; so never a `.`), joined with `.`, as long as the
/// name stays within 255 bytes. The prefsd key is everything after them, directories and key
/// name joined with `/`. When not even the first directory is plain (or the key sits at the
/// root), the domain is `_` and the key is the whole path without its leading `/`.
///
/// | GSettings full key | domain | key |
/// | --- | --- | --- |
/// | `/org/gnome/TextEditor/style-scheme` | `org.gnome.TextEditor` | `style-scheme` |
/// | `/org/gnome/desktop/interface/gtk-theme` | `org.gnome.desktop` | `interface/gtk-theme` |
/// | `/org/gnome/terminal/legacy/profiles:/:b1dc…/font` | `org.gnome.terminal` | `legacy/profiles:/:b1dc…/font` |
/// | `/apps/my.app/key` | `apps` | `my.app/key` |
/// | `/:weird/key` | `_` | `:weird/key` |
///
/// Characters a domain name cannot hold are never escaped: the directory holding them,
/// and every one after it, goes into the key, which takes any UTF-8 but NUL. The reverse
/// is `"/" + domain with "." turned into "/" + "/" + key` (`"/" + key` for `_`); a prefsd
/// key that the forward rule would not produce (say `extra/k` in `org.gnome`, which
/// GSettings would look for in `org.gnome.extra`) is not a GSettings key, and GSettings
/// never sees it. A full key is not mappable when the prefsd key would be empty, longer
/// than 1024 bytes, or not in Unicode normal form C (prefsd normalises keys to NFC, so
/// such a key would come back spelled differently).
public struct GSettingsPath: Sendable, Hashable {
    /// The prefsd domain.
    public let domain: String
    /// The key inside the domain.
    public let key: String

    /// The domain of full keys that have no plain first directory.
    public static let rootDomain = "_"
    /// At most this many leading directories make the domain.
    public static let domainDirectories = 3

    /// The location of the GSettings full key `path` (`/dir/…/name`), or `nil` when it is
    /// not a valid GSettings key or breaks prefsd's limits (see the type's documentation).
    public init?(settingsKey path: String) {
        guard path.utf8.first == UInt8(ascii: "/"), !path.utf8.contains(0) else { return nil }
        let parts = path.utf8.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard parts.count >= 1, parts.allSatisfy({ !$0.isEmpty }) else { return nil }
        var domainParts: [Substring.UTF8View.SubSequence] = []
        var length = 0
        for part in parts.dropLast() {
            guard domainParts.count < Self.domainDirectories, Self.isPlain(part) else { break }
            let added = part.count + (domainParts.isEmpty ? 0 : 1)
            guard length + added <= 255 else { break }
            domainParts.append(part)
            length += added
        }
        let keyParts = parts.dropFirst(domainParts.count)
        guard let key = String(validating: Array(keyParts.joined(separator: [UInt8(ascii: "/")])), as: UTF8.self),
            !key.isEmpty, key.utf8.count <= PreferenceKey.maximumLength,
            PreferenceKey.normalized(key).utf8.elementsEqual(key.utf8)
        else { return nil }
        domain =
            domainParts.isEmpty
            ? Self.rootDomain
            : String(decoding: Array(domainParts.joined(separator: [UInt8(ascii: ".")])), as: UTF8.self)
        self.key = key
    }

    /// The location `key` of `domain` when it is the image of a GSettings key under the
    /// rule, else `nil`.
    public init?(domain: String, key: String) {
        guard let mapped = GSettingsPath(settingsKey: Self.settingsKey(domain: domain, key: key)),
            mapped.domain == domain, mapped.key == key
        else { return nil }
        self = mapped
    }

    /// The GSettings full key (`/org/gnome/TextEditor/style-scheme`).
    public var settingsKey: String { Self.settingsKey(domain: domain, key: key) }

    /// The GSettings path of a domain's directory (`/org/gnome/TextEditor/`; `/` for `_`):
    /// every key of the domain lies under it.
    public static func settingsPath(ofDomain domain: String) -> String {
        domain == rootDomain ? "/" : "/" + domain.split(separator: ".", omittingEmptySubsequences: false).joined(separator: "/") + "/"
    }

    /// The domains that hold the keys directly inside the GSettings directory `path`
    /// (`/org/gnome/TextEditor/` → `org.gnome.TextEditor`): the domain its keys map to.
    /// `nil` for a path that is not a GSettings directory.
    public static func domain(ofDirectory path: String) -> String? {
        guard path.hasSuffix("/"), let probe = GSettingsPath(settingsKey: path + "k") else { return nil }
        return probe.domain
    }

    private static func settingsKey(domain: String, key: String) -> String {
        settingsPath(ofDomain: domain) + key
    }

    private static func isPlain(_ part: Substring.UTF8View.SubSequence) -> Bool {
        guard let first = part.first, isAlphanumeric(first) else { return false }
        return part.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: false
        }
    }
}
