/// The version of prefsd's release, the one place it is written: `prefsd --version`,
/// `prefs --version`, `prefs-settings --version` and the service's `Version` property all
/// report it.
public enum PrefsdVersion {
    /// The release, as `MAJOR.MINOR.PATCH`.
    public static let current = "0.4.0"
}
