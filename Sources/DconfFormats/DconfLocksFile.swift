import Foundation

/// The `locks/` files of a dconf system database: each line that starts with `/` locks
/// that key, as `dconf update` reads them. Other lines that are not blank or `#` comments
/// are problems (dconf ignores them silently, which hides a forgotten `/`).
public enum DconfLocksFile {
    /// One lock: the line it is on, from 1, and the full dconf key it locks.
    public struct Lock: Sendable, Equatable {
        /// The line's number, from 1.
        public let line: Int
        /// The locked key (`/org/gnome/desktop/session/idle-delay`).
        public let key: String
    }

    /// The locks of the file `bytes`, in line order, and the lines that are not locks.
    public static func read(_ bytes: [UInt8]) -> (locks: [Lock], problems: [DconfKeyfile.Problem]) {
        var locks: [Lock] = []
        var problems: [DconfKeyfile.Problem] = []
        for (index, line) in DconfKeyfile.lines(of: bytes).enumerated() {
            let number = index + 1
            guard let text = line else {
                problems.append(DconfKeyfile.Problem(line: number, message: "the line is not UTF-8 text"))
                continue
            }
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            guard text.hasPrefix("/"), trimmed == text else {
                problems.append(
                    DconfKeyfile.Problem(
                        line: number,
                        message:
                            "\"\(text)\" is not a key to lock: a lock is a dconf key alone on its line, starting with / (/org/gnome/desktop/interface/gtk-theme)"
                    ))
                continue
            }
            locks.append(Lock(line: number, key: text))
        }
        return (locks, problems)
    }
}
