/// Where xfconfd keeps its channel files, as libxfce4util finds them for it: the user's
/// folder, which it writes, and the administrator's, which it reads.
public enum XfconfFolders {
    /// The channel folder under a configuration folder.
    public static let subpath = "xfce4/xfconf/xfce-perchannel-xml"

    /// The user's channel folder: `$XDG_CONFIG_HOME/xfce4/xfconf/xfce-perchannel-xml`
    /// (`$HOME/.config/…` without an absolute `XDG_CONFIG_HOME`).
    public static func user(environment: [String: String]) -> String {
        let configHome = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? (environment["HOME"] ?? "") + "/.config"
        return configHome + "/" + subpath
    }

    /// The administrator's channel folders, the most important first: under each absolute
    /// folder of `$XDG_CONFIG_DIRS` (`/etc/xdg` without it), then under `/etc/xdg`, which
    /// libxfce4util adds whatever the variable says; the user's folder and repeats left out.
    public static func system(environment: [String: String]) -> [String] {
        let configDirectories = (environment["XDG_CONFIG_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/etc/xdg")
            .split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        var seen: Set<String> = [user(environment: environment)]
        return (configDirectories + ["/etc/xdg"]).map { $0 + "/" + subpath }.filter { seen.insert($0).inserted }
    }
}
