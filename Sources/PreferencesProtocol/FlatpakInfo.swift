import Foundation
import RegularFiles

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
        /// The file names an application, by a valid Flatpak application ID.
        case application(FlatpakInfo)
        /// The file (or the directory it is in) could not be read, is not a regular file of at
        /// most ``maximumBytes``, or names no valid application ID.
        case unreadable(String)
    }

    /// The largest `.flatpak-info` read (Flatpak writes a few hundred bytes).
    public static let maximumBytes = 64 << 10

    /// Reads the file at `path`, telling a missing file apart from one that cannot be read:
    /// only `ENOENT` and `ENOTDIR` are `.absent`.
    ///
    /// Whoever runs in the sandbox may control the path, so it is never waited on: only a
    /// regular file of at most ``maximumBytes`` is read, opened with `O_NONBLOCK` and
    /// `O_NOFOLLOW` (a FIFO, device, socket, directory or symbolic link there is
    /// `.unreadable`), and the application ID must be valid as Flatpak has it
    /// (``problem(withApplicationID:)``).
    public static func read(atPath path: String) -> Presence {
        let bytes: [UInt8]
        do {
            bytes = try RegularFile.contents(atPath: path, limit: maximumBytes, followingSymlinks: false)
        } catch .missing {
            return .absent
        } catch {
            return .unreadable("\(path): \(error)")
        }
        guard let info = FlatpakInfo(text: String(decoding: bytes, as: UTF8.self)) else {
            return .unreadable("\(path) names no application ([Application] name=)")
        }
        if let problem = problem(withApplicationID: info.applicationID) {
            return .unreadable("\(path) names \"\(info.applicationID)\", which is not a Flatpak application ID: \(problem)")
        }
        return .application(info)
    }

    /// Why `id` is not a valid Flatpak application ID, or `nil` when it is one. The rules
    /// are Flatpak's (`flatpak_is_valid_name`): at most 255 characters; 3 or more elements
    /// separated by `.`, none empty; only ASCII letters, digits, `_` and, in the last
    /// element only, `-`; no element starts with a digit.
    public static func problem(withApplicationID id: String) -> String? {
        let bytes = Array(id.utf8)
        if bytes.isEmpty { return "it is empty" }
        if bytes.count > 255 { return "it is longer than 255 characters" }
        let elements = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        if elements.count < 3 { return "it needs at least 3 elements separated by \".\" (like org.example.App)" }
        for (index, element) in elements.enumerated() {
            let last = index == elements.count - 1
            guard let first = element.first else { return "it has an empty element" }
            if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) { return "an element starts with a digit" }
            for byte in element {
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"):
                    continue
                case UInt8(ascii: "-") where last:
                    continue
                case UInt8(ascii: "-"):
                    return "only its last element may contain \"-\""
                default:
                    return "it may contain only ASCII letters, digits, \"_\", \"-\" and \".\""
                }
            }
        }
        return nil
    }
}
