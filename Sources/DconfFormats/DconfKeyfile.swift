/// dconf's keyfiles: the keyfile `dconf dump PATH` prints and `dconf load PATH` reads, and
/// the keyfiles of a system database (`/etc/dconf/db/NAME.d/*`) that `dconf update`
/// compiles. One group per directory (`[org/gnome/desktop/interface]`, `[/]` for the
/// directory itself), one line per key, `key=GVariant text`, `#` comments.
///
/// Read line by line (``read(_:)``), so that a bad line is reported with its number; the
/// reader stops at nothing, and each caller decides: the service applies the other lines,
/// `prefs dconf-import` refuses the file.
public enum DconfKeyfile {
    /// One key of a keyfile: its full dconf key and its GVariant text.
    public struct Entry: Sendable, Hashable {
        /// The full key (`/org/gnome/desktop/interface/gtk-theme`).
        public let key: String
        /// Its value, GVariant text (`'Adwaita'`).
        public let text: String

        /// An entry.
        public init(key: String, text: String) {
            self.key = key
            self.text = text
        }
    }

    /// One `key=value` line, as written: its group, key name and value text.
    public struct Assignment: Sendable, Equatable {
        /// The line's number, from 1.
        public let line: Int
        /// The group it is in, without its brackets (`org/gnome/desktop/interface`, `/`).
        public let group: String
        /// The key's name (`gtk-theme`), without the blanks around it.
        public let name: String
        /// The value's text, raw (GVariant text is one line), without the blanks before it.
        public let text: String
    }

    /// A line that is not usable: not UTF-8, not a group, a key or a comment, or a key
    /// outside any valid group.
    public struct Problem: Sendable, Equatable {
        /// The line's number, from 1.
        public let line: Int
        /// What is wrong with it, and what happens to it.
        public let message: String
    }

    /// Every assignment of the keyfile `bytes` in file order (a key named twice appears
    /// twice: the last wins), and the lines that could not be used. Blanks are spaces and
    /// tabs; a line may end in CRLF.
    public static func read(_ bytes: [UInt8]) -> (assignments: [Assignment], problems: [Problem]) {
        var assignments: [Assignment] = []
        var problems: [Problem] = []
        var group: String?
        for (index, line) in lines(of: bytes).enumerated() {
            let number = index + 1
            guard let text = line else {
                problems.append(Problem(line: number, message: "the line is not UTF-8 text"))
                continue
            }
            let trimmed = text.drop { $0 == " " || $0 == "\t" }
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            if trimmed.hasPrefix("[") {
                let closed = trimmed.trimmingSuffix { $0 == " " || $0 == "\t" }
                guard closed.hasSuffix("]"), closed.count >= 3, !closed.dropFirst().dropLast().contains(where: { $0 == "[" || $0 == "]" }) else {
                    problems.append(Problem(line: number, message: "\(trimmed) is not a group ([org/gnome/desktop/interface]); its keys are ignored"))
                    group = nil
                    continue
                }
                group = String(closed.dropFirst().dropLast())
                continue
            }
            guard let equals = trimmed.firstIndex(of: "=") else {
                problems.append(Problem(line: number, message: "\"\(trimmed)\" is neither key=value, a [group] nor a # comment"))
                continue
            }
            let name = trimmed[..<equals].trimmingSuffix { $0 == " " || $0 == "\t" }
            let valueText = String(trimmed[trimmed.index(after: equals)...].drop { $0 == " " || $0 == "\t" })
            guard let group else {
                problems.append(Problem(line: number, message: "\(name) is not inside a valid [group]"))
                continue
            }
            guard !name.isEmpty else {
                problems.append(Problem(line: number, message: "the line has no key before ="))
                continue
            }
            assignments.append(Assignment(line: number, group: group, name: String(name), text: valueText))
        }
        return (assignments, problems)
    }

    /// The lines of a file, without their line feed (and carriage return), `nil` for a
    /// line that is not UTF-8.
    public static func lines(of bytes: [UInt8]) -> [String?] {
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }
        return lines.map { line in
            let body = line.last == UInt8(ascii: "\r") ? line.dropLast() : line
            return String(validating: Array(body), as: UTF8.self)
        }
    }

    /// The entries of `contents`, a keyfile dumped from the directory `path`, in file order:
    /// each group a directory below `path` (leading and trailing `/` of its name ignored).
    /// Values are taken raw, as `dconf load` takes them (GVariant text is one line).
    /// - Throws: ``DconfFormatError/keyfile(detail:)`` naming the first line that is not
    ///   usable: the whole file is refused, as `dconf load` refuses it.
    public static func entries(_ contents: String, under path: String) throws(DconfFormatError) -> [Entry] {
        try DconfPath.checkDirectory(path)
        let (assignments, problems) = read(Array(contents.utf8))
        if let problem = problems.first { throw .keyfile(detail: "line \(problem.line): \(problem.message)") }
        return assignments.map { assignment in
            let group = assignment.group
            let directory = group == "/" ? path : path + group.drop { $0 == "/" } + (group.hasSuffix("/") ? "" : "/")
            return Entry(key: directory + assignment.name, text: assignment.text)
        }
    }

    /// The keyfile of `entries`, all under the directory `path`, that `dconf load PATH`
    /// reads: groups and keys sorted, as `dconf dump` prints them.
    public static func render(_ entries: [Entry], under path: String) -> String {
        var groups: [String: [(String, String)]] = [:]
        for entry in entries where entry.key.hasPrefix(path) {
            let relative = entry.key.dropFirst(path.count)
            guard let slash = relative.lastIndex(of: "/") else {
                groups["/", default: []].append((String(relative), entry.text))
                continue
            }
            groups[String(relative[..<slash]), default: []].append((String(relative[relative.index(after: slash)...]), entry.text))
        }
        return groups.keys.sorted().map { group in
            "[\(group)]\n" + groups[group, default: []].sorted { $0.0 < $1.0 }.map { "\($0.0)=\($0.1)\n" }.joined()
        }.joined(separator: "\n")
    }
}

extension Substring {
    /// The substring without the characters at its end that satisfy `predicate`.
    fileprivate func trimmingSuffix(while predicate: (Character) -> Bool) -> Substring {
        var end = endIndex
        while end > startIndex, predicate(self[index(before: end)]) { end = index(before: end) }
        return self[startIndex..<end]
    }
}
