import Foundation
import PrefsCommand
import PrefsdTestSupport
import Testing

/// What the pages say of the executables' command lines, against the executables.
@Suite("README and docs/ against the command lines")
struct FlagTests {
    @Test("every prefsd flag the pages name is one prefsd takes")
    func prefsdFlags() throws {
        let help = try runCommand(ServiceFixture.binary.path, ["--help-hidden"])
        #expect(help.status == 0, "prefsd --help-hidden exited \(help.status): \(help.stderr)")
        let taken = Set(Self.flags(in: help.stdout + help.stderr))
        // prefsd's flags by their families; benchmarks.md names prefs-bench's flags instead.
        let family = #"--(max|history|roaming|managed|defaults|dconf|settings|store|address|replace|log)[a-z-]*"#
        for name in Repository.pages where name != "docs/benchmarks.md" {
            let page = try MarkdownPage(name)
            for (index, line) in page.lines.enumerated() {
                // A bare `--history` is the Settings app's (`prefs-settings DOMAIN --history`).
                for flag in Self.flags(in: line, matching: family) where !taken.contains(flag) && flag != "--history" {
                    Issue.record("\(page.place(index + 1)): \(flag) is not a flag of prefsd (prefsd --help-hidden)")
                }
            }
        }
    }

    @Test("docs/prefsd.md's exit statuses are prefsd --help's (and so man 8 prefsd's), and both say where the log is")
    func prefsdExitStatusesAndLog() throws {
        let help = try runCommand(ServiceFixture.binary.path, ["--help"], environment: ["COLUMNS": "100000"])
        #expect(help.status == 0, "prefsd --help exited \(help.status): \(help.stderr)")
        // The help's table: "  64  a bad flag …" lines after "Exit status:", a meaning going
        // on over lines indented further.
        var helped: [Int: String] = [:]
        var last: Int?
        for line in help.stdout.split(separator: "\n").drop(while: { $0 != "Exit status:" }).dropFirst() {
            guard line.hasPrefix("  ") else { break }
            let words = line.split(separator: " ", maxSplits: 1)
            if let status = words.first.flatMap({ Int($0) }), words.count == 2 {
                helped[status] = words[1].trimmingCharacters(in: .whitespaces)
                last = status
            } else if let last {
                helped[last, default: ""] += " " + line.trimmingCharacters(in: .whitespaces)
            }
        }
        let page = try MarkdownPage("docs/prefsd.md")
        var documented: [Int: String] = [:]
        for row in page.prose.map(\.text) where row.hasPrefix("| ") {
            let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            if cells.count == 2, let status = Int(cells[0]) { documented[status] = cells[1].replacingOccurrences(of: "`", with: "") }
        }
        #expect(
            !documented.isEmpty && documented == helped,
            "docs/prefsd.md: \(documented.sorted { $0.key < $1.key }), prefsd --help: \(helped.sorted { $0.key < $1.key })")
        let pageText = page.prose.map(\.text).joined(separator: " ")
        for place in ["journalctl --user -u prefsd", "the bus daemon's standard error", "dbus-run-session"] {
            #expect(help.stdout.contains(place), "prefsd --help does not name \(place) as where the log goes")
            #expect(pageText.contains(place), "docs/prefsd.md does not name \(place) as where the log goes")
        }
    }

    // docs/prefs.md's exit-status table is checked, with each status's meaning and prefs
    // --help, by PrefsCommandTests (ParsingTests).

    @Test("docs/prefs.md's verb table has a row for every verb of prefs")
    func prefsVerbs() throws {
        let page = try MarkdownPage("docs/prefs.md")
        let rows = page.prose.map(\.text).filter { $0.hasPrefix("| `") }
        for verb in Prefs.configuration.subcommands.map({ $0._commandName }) {
            #expect(rows.contains { $0.hasPrefix("| `\(verb) ") || $0.hasPrefix("| `\(verb)`") }, "docs/prefs.md has no row for the verb \(verb)")
        }
    }

    /// The `--flags` in `text`, optionally only those matching `pattern`.
    static func flags(in text: String, matching pattern: String = #"--[a-z][a-z0-9-]*"#) -> [String] {
        var found: [String] = []
        var rest = Substring(text)
        while let range = rest.range(of: pattern, options: .regularExpression) {
            // A flag is a whole word: not the tail of a longer one (`--max-` in `--max-…`).
            let flag = String(rest[range])
            if !flag.hasSuffix("-") { found.append(flag) }
            rest = rest[range.upperBound...]
        }
        return found
    }
}
