import Foundation
import PreferencesModel

/// Finds settings bundles in the XDG data directories: `prefsd/settings/<domain>/` under
/// `$XDG_DATA_HOME` (`~/.local/share` when unset), then under each of `$XDG_DATA_DIRS`
/// (`/usr/local/share:/usr/share` when unset). The first directory holding a bundle for a
/// domain wins, so a user's bundle replaces a system one.
public struct SettingsBundleLocator: Sendable, Hashable {
    /// The `prefsd/settings` directories searched, most important first.
    public var searchDirectories: [String]

    /// The folder under each data directory.
    public static let subdirectory = "prefsd/settings"

    /// The search directories for an environment, as the XDG base directory specification
    /// orders them (relative paths, which the specification calls invalid, are ignored).
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        var bases: [String] = []
        if let home = environment["XDG_DATA_HOME"], home.hasPrefix("/") {
            bases.append(home)
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            bases.append((home as NSString).appendingPathComponent(".local/share"))
        }
        let system = environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share"
        bases += system.split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        var unique: [String] = []
        for base in bases {
            let directory = (base as NSString).appendingPathComponent(Self.subdirectory)
            if !unique.contains(directory) { unique.append(directory) }
        }
        searchDirectories = unique
    }

    /// Search these directories (each a `prefsd/settings` folder).
    public init(searchDirectories: [String]) {
        self.searchDirectories = searchDirectories
    }

    /// The folder of the bundle for `domain`, from the first search directory that has
    /// one (a folder of that name with `Root.plist` in it).
    public func directory(for domain: String) -> String? {
        guard DomainName.problem(with: domain) == nil else { return nil }
        for base in searchDirectories {
            let directory = (base as NSString).appendingPathComponent(domain)
            if FileManager.default.fileExists(atPath: (directory as NSString).appendingPathComponent("Root.plist")) {
                return directory
            }
        }
        return nil
    }

    /// The bundle for `domain`, translated for `languages`, or `nil` when there is none.
    public func bundle(for domain: String, languages: [String]) -> SettingsBundle? {
        directory(for: domain).map { SettingsBundle.load(domain: domain, directory: $0, languages: languages) }
    }

    /// Every domain with a bundle, sorted, and the folders skipped because their name is
    /// not a domain name (each as a problem with its path).
    public func scan() -> (domains: [String], problems: [SettingsBundleError]) {
        var domains = Set<String>()
        var problems: [SettingsBundleError] = []
        for base in searchDirectories {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: base) else { continue }
            for name in names.sorted() {
                let directory = (base as NSString).appendingPathComponent(name)
                guard FileManager.default.fileExists(atPath: (directory as NSString).appendingPathComponent("Root.plist")) else { continue }
                if let problem = DomainName.problem(with: name) {
                    problems.append(
                        .invalidEntry(
                            path: directory, location: "folder name",
                            reason: "is not a domain name (\(problem)); name the folder after the application's domain"))
                } else {
                    domains.insert(name)
                }
            }
        }
        return (domains.sorted(), problems)
    }
}
