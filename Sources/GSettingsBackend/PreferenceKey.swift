import CGSettingsBackend

/// What ``GSettingsPath`` (compiled in from `Sources/GSettingsPaths`) needs of
/// `PreferencesModel.PreferenceKey`, without Foundation: the length limit, and Unicode
/// normal form C through GLib's `g_utf8_normalize` (prefsd normalises keys to NFC).
enum PreferenceKey {
    /// The longest key prefsd takes, in UTF-8 bytes.
    static let maximumLength = 1024

    /// `key` in normal form C.
    static func normalized(_ key: String) -> String {
        if key.utf8.allSatisfy({ $0 < 0x80 }) { return key }
        guard let normal = g_utf8_normalize(key, -1, G_NORMALIZE_NFC) else { return key }
        defer { g_free(normal) }
        return String(cString: normal)
    }
}
