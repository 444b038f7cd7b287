import Foundation
import GSettingsPaths
import GVariantCoding
import PreferencesModel

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

extension Substring {
    /// The substring without the characters at its end that satisfy `predicate`.
    func trimmingSuffix(while predicate: (Character) -> Bool) -> Substring {
        var end = endIndex
        while end > startIndex, predicate(self[index(before: end)]) { end = index(before: end) }
        return self[startIndex..<end]
    }
}
