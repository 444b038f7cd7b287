#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The application a Flatpak sandbox runs, from its `/.flatpak-info` file (a key file
/// whose `[Application]` group has `name=APPID`).
public struct FlatpakInfo: Sendable, Hashable {
    /// The path of the file inside a sandbox.
    public static let path = "/.flatpak-info"

    /// The application ID (like `org.example.Editor`).
    public var applicationID: String

    /// Reads the application ID from the text of a `.flatpak-info` file; `nil` when the
    /// text has no `[Application]` group with a non-empty `name`.
    public init?(text: String) {
        var group = ""
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                group = String(line.dropFirst().dropLast())
                continue
            }
            guard group == "Application", let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if key == "name", !value.isEmpty {
                applicationID = value
                return
            }
        }
        return nil
    }

    /// What a path holds: no file, a Flatpak application's file, or something that could
    /// not be read (which a caller deciding access must treat as unknown, never as "no file").
    public enum Presence: Sendable, Equatable {
        /// There is no such file (`ENOENT`, or `ENOTDIR` on the way).
        case absent
        /// The file names an application.
        case application(FlatpakInfo)
        /// The file (or the directory it is in) could not be read, or names no application.
        case unreadable(String)
    }

    /// Reads the file at `path` (at most 64 KiB), telling a missing file apart from one
    /// that cannot be read: only `ENOENT` and `ENOTDIR` are `.absent`.
    public static func read(atPath path: String) -> Presence {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)
        guard descriptor >= 0 else {
            let number = errno
            if number == ENOENT || number == ENOTDIR { return .absent }
            return .unreadable("cannot open \(path): \(String(cString: strerror(number)))")
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 65536 {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return .unreadable("cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            bytes += chunk[0..<count]
        }
        guard let info = FlatpakInfo(text: String(decoding: bytes, as: UTF8.self)) else {
            return .unreadable("\(path) names no application ([Application] name=)")
        }
        return .application(info)
    }
}
