import Foundation
import GSettingsPaths
import GVariantCoding
import PreferencesModel

/// A GSettings key as prefsd keeps it: the domain and key the path rule maps a dconf key to.
struct MappedKey: Sendable, Hashable, Comparable {
    /// The prefsd domain.
    var domain: DomainName
    /// The key inside it.
    var key: String

    static func < (lhs: MappedKey, rhs: MappedKey) -> Bool {
        (lhs.domain.rawValue, lhs.key) < (rhs.domain.rawValue, rhs.key)
    }

    /// Where the dconf key `path` lives in prefsd.
    /// - Throws: ``PreferencesServiceError/invalidName(_:)`` saying why it cannot be there.
    static func mapping(_ path: String) throws(PreferencesServiceError) -> MappedKey {
        guard path.hasPrefix("/"), !path.hasSuffix("/"), !path.contains("//") else {
            throw .invalidName("\(path) is not a dconf key (it starts with /, has no // and does not end with /)")
        }
        guard let location = GSettingsPath(settingsKey: path), let domain = try? DomainName(location.domain) else {
            throw .invalidName(
                "\(path) cannot be a GSettings key under prefsd (its prefsd key would break the limits on keys: 1–1024 bytes of UTF-8 in normal form C)")
        }
        return MappedKey(domain: domain, key: location.key)
    }
}

/// One problem found in a file, by line (0: the file as a whole).
struct FileProblem: Sendable, Equatable {
    /// The line's number, from 1.
    var line: Int
    /// What is wrong with it, and what happens to it.
    var message: String
}

/// The keyfiles of a dconf system database (`/etc/dconf/db/NAME.d/*`), read line by line
/// as `dconf update` reads them, so that prefsd needs no compiled database: groups are
/// directories below `/` (`[org/gnome/desktop/interface]`), each `key=value` a GVariant
/// text. Unlike `dconf update`, which refuses the whole database over one bad line, a bad
/// line is reported with its number and the others apply.
enum DconfKeyfileReader {
    /// The values of one keyfile, stored as the GSettings module stores them, the last
    /// line of a key winning; and the lines that could not be used. `check` judges each
    /// value against the bus's limits (a thrown error's description is reported).
    static func read(_ bytes: [UInt8], check: (PropertyListValue, String) throws -> Void) -> (values: [MappedKey: PropertyListValue], problems: [FileProblem]) {
        var values: [MappedKey: PropertyListValue] = [:]
        var problems: [FileProblem] = []
        var group: String?
        for (index, line) in lines(of: bytes).enumerated() {
            let number = index + 1
            guard let text = line else {
                problems.append(FileProblem(line: number, message: "the line is not UTF-8 text"))
                continue
            }
            let trimmed = text.drop { $0 == " " || $0 == "\t" }
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            if trimmed.hasPrefix("[") {
                let closed = trimmed.trimmingSuffix { $0 == " " || $0 == "\t" }
                guard closed.hasSuffix("]"), closed.count >= 3, !closed.dropFirst().dropLast().contains(where: { $0 == "[" || $0 == "]" }) else {
                    problems.append(FileProblem(line: number, message: "\(trimmed) is not a group ([org/gnome/desktop/interface]); its keys are ignored"))
                    group = nil
                    continue
                }
                group = String(closed.dropFirst().dropLast())
                continue
            }
            guard let equals = trimmed.firstIndex(of: "=") else {
                problems.append(FileProblem(line: number, message: "\"\(trimmed)\" is neither key=value, a [group] nor a # comment"))
                continue
            }
            let name = trimmed[..<equals].trimmingSuffix { $0 == " " || $0 == "\t" }
            let valueText = String(trimmed[trimmed.index(after: equals)...].drop { $0 == " " || $0 == "\t" })
            guard let group else {
                problems.append(FileProblem(line: number, message: "\(name) is not inside a valid [group]"))
                continue
            }
            guard !name.isEmpty else {
                problems.append(FileProblem(line: number, message: "the line has no key before ="))
                continue
            }
            let path = "/" + (group == "/" ? "" : group + "/") + name
            let key: MappedKey
            do {
                key = try MappedKey.mapping(path)
            } catch {
                problems.append(FileProblem(line: number, message: "[\(group)] \(name): \(error)"))
                continue
            }
            do {
                let value = try GVariantText.storedValue(parsing: valueText, key: path).value
                try check(value, "the value of \(path)")
                values[key] = value
            } catch {
                problems.append(FileProblem(line: number, message: "\(error)"))
            }
        }
        return (values, problems)
    }

    /// The lines of a file, without their line feed (and carriage return), `nil` for a
    /// line that is not UTF-8.
    static func lines(of bytes: [UInt8]) -> [String?] {
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }
        return lines.map { line in
            let body = line.last == UInt8(ascii: "\r") ? line.dropLast() : line
            return String(validating: Array(body), as: UTF8.self)
        }
    }
}

/// The `locks/` files of a dconf system database: each line that starts with `/` locks that
/// key, as `dconf update` reads them. Other lines that are not blank or `#` comments are
/// reported (dconf ignores them silently, which hides a forgotten `/`).
enum DconfLocksReader {
    /// The keys one locks file locks, and the lines that could not be used.
    static func read(_ bytes: [UInt8]) -> (keys: Set<MappedKey>, problems: [FileProblem]) {
        var keys: Set<MappedKey> = []
        var problems: [FileProblem] = []
        for (index, line) in DconfKeyfileReader.lines(of: bytes).enumerated() {
            let number = index + 1
            guard let text = line else {
                problems.append(FileProblem(line: number, message: "the line is not UTF-8 text"))
                continue
            }
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            guard text.hasPrefix("/"), trimmed == text else {
                problems.append(
                    FileProblem(
                        line: number,
                        message:
                            "\"\(text)\" is not a key to lock: a lock is a dconf key alone on its line, starting with / (/org/gnome/desktop/interface/gtk-theme)"
                    ))
                continue
            }
            do {
                keys.insert(try MappedKey.mapping(text))
            } catch {
                problems.append(FileProblem(line: number, message: error.description))
            }
        }
        return (keys, problems)
    }
}

extension Substring {
    /// The substring without the characters at its end that satisfy `predicate`.
    func trimmingSuffix(while predicate: (Character) -> Bool) -> Substring {
        var end = endIndex
        while end > startIndex, predicate(self[index(before: end)]) { end = index(before: end) }
        return self[startIndex..<end]
    }
}
