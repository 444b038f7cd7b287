import Dconf
import Foundation
import PreferencesProtocol
import RegularFiles

/// The identity of a store that prefsd's mark in dconf's file names (``DconfMirror/Mark``):
/// 32 random hexadecimal digits, made once and kept in the store's directory
/// (`dconf-mark`, mode 0600), so that it goes wherever the store goes. It tells prefsd's own
/// mirror of this store from a file another store's prefsd wrote, and a copy handed back by
/// this store's prefsd from one someone placed there.
enum DconfStoreMark {
    /// The file's name in the store directory.
    static let fileName = "dconf-mark"

    /// The mark of the store in `storeDirectory`: its identity read, or made when there is
    /// none (or what is there is not one: other text, not a regular file, not the user's;
    /// it is replaced). When the identity can be neither read nor made, a mark naming no
    /// store, and why.
    static func load(storeDirectory: URL) -> (mark: DconfMirror.Mark, problem: String?) {
        let path = storeDirectory.appendingPathComponent(fileName).path
        do {
            let bytes = try RegularFile.contents(atPath: path, limit: 64, followingSymlinks: false, owner: getuid())
            let found = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if DconfMirror.Mark.isIdentity(found) { return (DconfMirror.Mark(store: found), nil) }
        } catch {
            switch error {
            case .missing, .notRegular, .notOwned, .tooLarge: break
            // Kept as it is: a file that cannot be read now may hold the identity still.
            default: return (DconfMirror.Mark(store: nil), "cannot read \(path): \(error)")
            }
        }
        // None, or not the store's identity: a new one is made in its place.
        unlink(path)
        let identity = (0..<2).map { _ in
            let number = String(UInt64.random(in: 0...UInt64.max), radix: 16)
            return String(repeating: "0", count: 16 - number.count) + number
        }.joined()
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            return (DconfMirror.Mark(store: nil), "cannot make \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        let text = Array((identity + "\n").utf8)
        guard text.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) == text.count, fsync(descriptor) == 0 else {
            let problem = "cannot write \(path): \(String(cString: strerror(errno)))"
            unlink(path)
            return (DconfMirror.Mark(store: nil), problem)
        }
        return (DconfMirror.Mark(store: identity), nil)
    }
}

extension PreferencesService {
    /// The mark of this store that dconf's file carries.
    var dconfMark: DconfMirror.Mark {
        DconfStoreMark.load(storeDirectory: configuration.storeDirectory).mark
    }
}
