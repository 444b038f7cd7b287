import Foundation
import Logging
import PreferencesModel
import RegularFiles
import Xfconf

#if canImport(Glibc)
    import Glibc
#endif

/// The administrator's xfconf channel files (`xfce4/xfconf/xfce-perchannel-xml/C.xml` in each
/// of `$XDG_CONFIG_DIRS`) as prefsd's administrator settings of the domain `xfconf.C`: their
/// values are defaults, and the properties their `locked` and `unlocked` lists lock for
/// this user are locked keys, each locked to the files' value (or to none), as xfconfd 4.18
/// merges the files: the least important folder first, a later file's value winning; a file
/// that locks the whole channel for the user drops what earlier files said and locks every
/// property the files give from then on, and a file that does not lock it is then ignored.
///
/// A channel xfconfd locks whole also hides the user's own values; prefsd locks the
/// properties the files name, and the user's other properties of the channel stay theirs.
enum XfconfChannelsReader {
    /// What the files set: defaults and locked keys, and the GVariant type of each value.
    struct Settings {
        var defaults: [DomainName: [String: PropertyListValue]] = [:]
        var locks: [DomainName: [String: AdministratorSettings.Lock]] = [:]
        var types: [DomainName: [String: String]] = [:]
    }

    /// Reads the channel files of `directories` (the most important first) for the user
    /// `user`, a member of `groups`; each file at most `limit` bytes. A file that cannot be
    /// read or does not parse is named in `logger`'s log and left out.
    static func read(directories: [String], user: String, groups: Set<String>, limit: Int, logger: Logger) -> Settings {
        var channels: [String: [String]] = [:]
        for directory in directories.reversed() {
            for (name, path) in XfconfChannelFiles.channelFiles(in: directory) { channels[name, default: []].append(path) }
        }
        var settings = Settings()
        for (name, paths) in channels {
            guard let channel = try? XfconfChannel(name) else {
                logger.warning("an administrator's channel file prefsd cannot carry is left out", metadata: ["files": "\(paths.joined(separator: ", "))"])
                continue
            }
            var values: [XfconfProperty: XfconfValue] = [:]
            var locked: Set<XfconfProperty> = []
            var channelLocked = false
            for path in paths {
                let file: XfconfChannelFile
                do {
                    file = try XfconfChannelFile(parsing: try RegularFile.contents(atPath: path, limit: limit, followingSymlinks: true), administrator: true)
                } catch {
                    logger.warning("an administrator's channel file is left out: \(error)", metadata: ["file": "\(path)"])
                    continue
                }
                let fileLocks = file.channelRestriction?.locks(user: user, groups: groups) ?? false
                if channelLocked && !fileLocks { continue }
                if !channelLocked && fileLocks {
                    values = [:]
                    locked = []
                    channelLocked = true
                }
                for (property, value) in file.values { values[property] = value }
                for (property, restriction) in file.restrictions {
                    if restriction.locks(user: user, groups: groups) { locked.insert(property) } else { locked.remove(property) }
                }
                if channelLocked { locked.formUnion(file.values.keys) }
            }
            let domain = channel.domain
            for (property, value) in values {
                settings.defaults[domain, default: [:]][property.key] = value.storedValue
                settings.types[domain, default: [:]][property.key] = value.storedType
            }
            for property in locked {
                settings.locks[domain, default: [:]][property.key] = AdministratorSettings.Lock(value: values[property]?.storedValue)
            }
        }
        return settings
    }

    /// The name of the user prefsd runs as, and the groups whose member lists name it, as
    /// xfconfd tells them (a user's primary group counts only when it lists the user).
    static func currentUser() -> (name: String, groups: Set<String>) {
        guard let entry = getpwuid(getuid()), let pointer = entry.pointee.pw_name else { return ("", []) }
        let name = String(cString: pointer)
        var groups: Set<String> = []
        setgrent()
        defer { endgrent() }
        while let group = getgrent() {
            var member = group.pointee.gr_mem
            while let current = member?.pointee {
                if String(cString: current) == name, let groupName = group.pointee.gr_name { groups.insert(String(cString: groupName)) }
                member = member?.advanced(by: 1)
            }
        }
        return (name, groups)
    }
}
