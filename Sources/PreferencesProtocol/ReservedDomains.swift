/// Domains no sandboxed application may read or change as its own, whatever its
/// application ID: they configure prefsd or the desktop for everyone.
///
/// - `NSGlobalDomain`, which every application reads (a sandboxed one may only read it);
/// - prefsd's own namespace, `io.github.prefsd` and `io.github.prefsd.*` (among them
///   `io.github.prefsd.Portal`, whose `ExposedDomains` says which domains the Settings
///   portal serves to every sandboxed application);
/// - `org.freedesktop.appearance`, which the Settings portal serves to every application as
///   the desktop's colour scheme, accent colour, contrast and motion;
/// - xfconf's channels, `xfconf.` and any name after it (the channel `xsettings` is the
///   domain `xfconf.xsettings`): Xfce's settings for the whole desktop.
public enum ReservedDomains {
    /// The namespace of prefsd's own domains.
    public static let prefsdNamespace = "io.github.prefsd"
    /// The domain the Settings portal serves as the `org.freedesktop.appearance` namespace.
    public static let appearance = "org.freedesktop.appearance"
    /// The global domain.
    public static let global = "NSGlobalDomain"
    /// What the domains of xfconf's channels start with.
    public static let xfconfPrefix = "xfconf."

    /// Whether `domain` is reserved: no sandboxed application owns it.
    public static func contains(_ domain: String) -> Bool {
        domain == global || domain == appearance || domain == prefsdNamespace || domain.hasPrefix(prefsdNamespace + ".")
            || domain.hasPrefix(xfconfPrefix)
    }
}
