import Foundation

/// A Markdown page of the repository, read the way the documentation tests need it: its
/// fenced blocks, its links and its headings' anchors, each with its line number.
struct MarkdownPage: Sendable {
    /// A fenced code block.
    struct Block: Sendable {
        /// The info string's first word (`sh`, `shell`, `text`, `swift`, …), or "".
        let language: String
        /// The line number (1-based) of the block's first content line.
        let firstLine: Int
        /// The content lines, without the fences.
        let lines: [String]
        /// The nearest non-blank line before the opening fence (an HTML comment that says
        /// which file the block is, say).
        let lineBefore: String
        /// Whether only blank lines separate this block from the one before it.
        let followsBlock: Bool

        /// The content as one string, lines joined with newlines.
        var text: String { lines.joined(separator: "\n") }
    }

    /// A link written `[text](target)` outside code.
    struct Link: Sendable {
        let target: String
        let line: Int
    }

    /// The path relative to the repository, as failures name it.
    let name: String
    /// The page's file.
    let url: URL
    let lines: [String]

    init(_ name: String) throws {
        self.name = name
        url = Repository.root.appendingPathComponent(name)
        lines = try String(contentsOf: url, encoding: .utf8).components(separatedBy: "\n")
    }

    /// `file:line`, for failure messages.
    func place(_ line: Int) -> String { "\(name):\(line)" }

    /// Every fenced block, in order.
    var blocks: [Block] {
        var blocks: [Block] = []
        var index = 0
        var lastContent = ""
        var blankSinceBlock = false
        while index < lines.count {
            let line = lines[index]
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("```") {
                let language = trimmed.dropFirst(3).split(separator: " ").first.map(String.init) ?? ""
                let indent = line.prefix { $0 == " " }.count
                var content: [String] = []
                var end = index + 1
                while end < lines.count, !lines[end].trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                    content.append(String(lines[end].dropFirst(min(indent, lines[end].prefix { $0 == " " }.count))))
                    end += 1
                }
                blocks.append(
                    Block(
                        language: language, firstLine: index + 2, lines: content,
                        lineBefore: lastContent, followsBlock: blankSinceBlock
                    ))
                index = end + 1
                blankSinceBlock = true
                lastContent = ""
                continue
            }
            if !trimmed.isEmpty {
                lastContent = trimmed
                blankSinceBlock = false
            }
            index += 1
        }
        return blocks
    }

    /// The lines outside fenced blocks, with their numbers.
    var prose: [(line: Int, text: String)] {
        var result: [(Int, String)] = []
        var inBlock = false
        for (index, line) in lines.enumerated() {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                inBlock.toggle()
                continue
            }
            if !inBlock { result.append((index + 1, line)) }
        }
        return result
    }

    /// Every `[text](target)` link (and `![alt](image)`) outside code blocks and inline code.
    var links: [Link] {
        var links: [Link] = []
        for (number, line) in prose {
            // Inline code holds no links: drop `…` spans first.
            let text = line.replacingOccurrences(of: "`[^`]*`", with: "", options: .regularExpression)
            var rest = Substring(text)
            while let close = rest.range(of: "](") {
                let after = rest[close.upperBound...]
                guard let end = after.firstIndex(of: ")") else { break }
                let target = after[..<end].split(separator: " ").first.map(String.init) ?? ""
                links.append(Link(target: target, line: number))
                rest = after[end...]
            }
        }
        return links
    }

    /// The anchors GitHub makes for the page's headings.
    var anchors: Set<String> {
        var anchors: Set<String> = []
        var counts: [String: Int] = [:]
        for (_, line) in prose where line.hasPrefix("#") {
            let title = line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)
            let slug = Self.slug(title)
            let count = counts[slug, default: 0]
            anchors.insert(count == 0 ? slug : "\(slug)-\(count)")
            counts[slug] = count + 1
        }
        return anchors
    }

    /// GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped,
    /// spaces turned into `-`.
    static func slug(_ title: String) -> String {
        var slug = ""
        for character in title.lowercased() {
            if character == " " {
                slug.append("-")
            } else if character == "-" || character == "_" || character.isLetter || character.isNumber {
                slug.append(character)
            }
        }
        return slug
    }
}

/// Where the repository and its pages are.
enum Repository {
    /// The package's root directory (this file is `Tests/DocumentationTests/Markdown.swift`).
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `README.md` and every `docs/*.md`, as paths relative to the root.
    static var pages: [String] {
        let docs = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)) ?? []
        return ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }
}
