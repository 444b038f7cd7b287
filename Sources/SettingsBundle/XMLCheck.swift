import Foundation

/// Finds where an XML property list stops being well-formed, for messages about
/// malformed plists (Foundation's parser says only that the data is not a plist).
enum XMLCheck {
    /// The 1-based line of the first tag that does not balance (a closing tag that does
    /// not match the open one, or an open tag never closed), or `nil` when the tags
    /// balance (the fault is then in the property-list structure, not the XML).
    static func firstUnbalancedLine(_ data: Data) -> Int? {
        guard let text = String(data: data, encoding: .utf8), text.contains("<plist") || text.hasPrefix("<?xml") else { return nil }
        var open: [(name: Substring, line: Int)] = []
        var line = 1
        var rest = text[...]
        while let start = rest.firstIndex(where: { $0 == "<" || $0 == "\n" }) {
            if rest[start] == "\n" {
                line += 1
                rest = rest[rest.index(after: start)...]
                continue
            }
            guard let end = rest[start...].firstIndex(of: ">") else { return line }
            let tag = rest[rest.index(after: start)..<end]
            line += tag.filter { $0 == "\n" }.count
            rest = rest[rest.index(after: end)...]
            if tag.hasPrefix("?") || tag.hasPrefix("!") || tag.hasSuffix("/") { continue }
            if tag.hasPrefix("/") {
                let name = tag.dropFirst().prefix { !$0.isWhitespace }
                guard let last = open.popLast(), last.name == name else { return line }
            } else {
                open.append((tag.prefix { !$0.isWhitespace }, line))
            }
        }
        return open.last?.line
    }
}
