import Foundation

/// Shell text as the documentation shows it, split as `sh` would split it: logical lines
/// (a trailing `\` joins the next), commands (`|`, `&&`, `||`, `;`), words (quotes and
/// backslashes honoured), redirections and the trailing comment. No expansion is done.
struct ShellLine: Sendable, Equatable {
    /// One simple command: its words (leading `VAR=value` assignments and `sudo` dropped)
    /// and the files it redirects to or from.
    struct Command: Sendable, Equatable {
        var words: [String] = []
        var redirections: [String] = []
    }

    /// The line number (1-based, in the page) where the logical line starts.
    let line: Int
    /// The logical line's text, continuation lines joined, here-document bodies left out.
    let text: String
    /// The commands of the line.
    let commands: [Command]
    /// The text after an unquoted `#`, trimmed ("" when none).
    let comment: String

    /// The logical lines of a block's `lines`, the first of them at page line `firstLine`;
    /// blank and comment-only lines are left out, and a here-document's body goes with the
    /// line that opens it.
    static func lines(of lines: [String], firstLine: Int) throws -> [ShellLine] {
        var result: [ShellLine] = []
        var index = 0
        while index < lines.count {
            let start = index
            var text = lines[index]
            while text.hasSuffix("\\"), index + 1 < lines.count {
                text.removeLast()
                index += 1
                text += lines[index]
            }
            index += 1
            let parsed = try parse(text, line: firstLine + start)
            // A here-document: its body runs to its delimiter line.
            if let marker = parsed.hereDocument {
                while index < lines.count, lines[index].trimmingCharacters(in: .whitespaces) != marker { index += 1 }
                index += 1
            }
            if !parsed.commands.isEmpty { result.append(parsed.shellLine) }
        }
        return result
    }

    /// A problem in the shell text itself.
    struct SyntaxError: Error, CustomStringConvertible {
        let line: Int
        let reason: String
        var description: String { "line \(line): \(reason)" }
    }

    private struct Parsed {
        var shellLine: ShellLine
        var commands: [Command] { shellLine.commands }
        var hereDocument: String?
    }

    private static func parse(_ text: String, line: Int) throws -> Parsed {
        var commands: [Command] = []
        var command = Command()
        var word = ""
        var inWord = false
        var redirectNext = false
        var hereDocument: String?
        var hereNext = false
        var comment = ""
        var characters = Array(text)[...]

        func endWord() {
            guard inWord else { return }
            if hereNext {
                hereDocument = word
                hereNext = false
            } else if redirectNext {
                command.redirections.append(word)
                redirectNext = false
            } else if command.words.isEmpty, word.contains("="), word.first != "=",
                word.prefix(while: { $0 != "=" }).allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" })
            {
                // VAR=value before the command: the environment, not a word.
            } else if command.words.isEmpty, word == "sudo" {
                // sudo: the command is the word after it.
            } else {
                command.words.append(word)
            }
            word = ""
            inWord = false
        }
        func endCommand() {
            endWord()
            if !command.words.isEmpty { commands.append(command) }
            command = Command()
        }

        while let character = characters.popFirst() {
            switch character {
            case "\\":
                if let next = characters.popFirst() { word.append(next) }
                inWord = true
            case "'":
                inWord = true
                guard let close = characters.firstIndex(of: "'") else {
                    throw SyntaxError(line: line, reason: "a ' is not closed in: \(text)")
                }
                word += String(characters[..<close])
                characters = characters[(close + 1)...]
            case "\"":
                inWord = true
                var closed = false
                while let inner = characters.popFirst() {
                    if inner == "\"" { closed = true; break }
                    if inner == "\\", let next = characters.first, "\"\\$`".contains(next) {
                        word.append(characters.removeFirst())
                    } else {
                        word.append(inner)
                    }
                }
                if !closed { throw SyntaxError(line: line, reason: "a \" is not closed in: \(text)") }
            case "$" where characters.first == "(":
                // A command substitution, kept as text.
                inWord = true
                word.append(character)
                var depth = 0
                while let inner = characters.popFirst() {
                    word.append(inner)
                    if inner == "(" { depth += 1 }
                    if inner == ")" { depth -= 1; if depth == 0 { break } }
                }
            case "#" where !inWord:
                comment = String(characters).trimmingCharacters(in: .whitespaces)
                characters = characters[characters.endIndex...]
            case " ", "\t":
                endWord()
            case "|", ";", "&":
                endCommand()
                if let next = characters.first, next == character { characters.removeFirst() }
            case ">", "<":
                // `2>`: the descriptor's digit is part of the operator.
                if inWord, word.allSatisfy(\.isNumber) { word = ""; inWord = false }
                endWord()
                if character == "<", characters.first == "<" {
                    characters.removeFirst()
                    hereNext = true
                } else {
                    if characters.first == ">" || characters.first == "&" { characters.removeFirst() }
                    redirectNext = true
                }
            default:
                word.append(character)
                inWord = true
            }
        }
        endCommand()
        let shellLine = ShellLine(line: line, text: text, commands: commands, comment: comment)
        return Parsed(shellLine: shellLine, hereDocument: hereDocument)
    }
}
