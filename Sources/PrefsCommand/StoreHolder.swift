import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Which process serves a prefsd store: prefsd holds an exclusive `flock` on the store's
/// `lock` file for as long as it serves the store, and the kernel lists every such lock, with
/// its holder, in `/proc/locks`.
enum StoreHolder {
    /// The store of a prefsd started without `--store` in `environment`:
    /// `$XDG_CONFIG_HOME/prefsd` (an absolute one), else `~/.config/prefsd`, as prefsd
    /// chooses it.
    static func defaultDirectory(environment: [String: String]) -> String {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") { return config + "/prefsd" }
        return (environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path) + "/.config/prefsd"
    }

    /// The process holding the lock of the store in `directory`, if one does.
    static func process(holding directory: String) -> pid_t? {
        var status = stat()
        guard stat(directory + "/lock", &status) == 0,
            let table = try? String(contentsOfFile: "/proc/locks", encoding: .utf8)
        else { return nil }
        // The kernel names a file by its device, in hexadecimal, and its inode.
        let device = UInt64(status.st_dev)
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~0xfff)
        let minor = (device & 0xff) | ((device >> 12) & ~0xff)
        let file = String(format: "%02llx:%02llx:%llu", major, minor, UInt64(status.st_ino))
        // `1: FLOCK  ADVISORY  WRITE 2245 fe:00:5310644 0 EOF`; a waiter's line has `->`
        // after the number, and is not a holder.
        for line in table.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 6, fields[1] == "FLOCK", fields[5] == file, let pid = pid_t(fields[4]), pid > 0 else { continue }
            return pid
        }
        return nil
    }
}
