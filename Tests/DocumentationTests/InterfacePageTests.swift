import Foundation
import PreferencesProtocol
import Testing

/// docs/interface.md against `Introspection/*.xml`: the page is written by hand, and this
/// test holds it to the XML, member by member.
@Suite("docs/interface.md against the Introspection XML")
struct InterfacePageTests {
    /// One row of the page's member tables.
    struct Row {
        let kind: Introspection.Member.Kind
        let interface: String
        let name: String
        let cells: [String]
        let line: Int
    }

    /// The member tables' rows: under a heading naming an interface (`` `io.github.prefsd.…` ``),
    /// tables whose first column is `method`, `signal` or `property`.
    static func rows(of page: MarkdownPage) -> [Row] {
        var rows: [Row] = []
        var interface = ""
        var kind: Introspection.Member.Kind?
        for (number, line) in page.prose {
            if line.hasPrefix("#") {
                if let range = line.range(of: #"`io\.github\.prefsd\.[A-Za-z0-9]+`"#, options: .regularExpression) {
                    interface = String(line[range].dropFirst().dropLast())
                }
                kind = nil
                continue
            }
            guard line.hasPrefix("|") else { kind = nil; continue }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard let first = cells.first else { continue }
            if let header = Introspection.Member.Kind(rawValue: first) {
                kind = header
                continue
            }
            guard let kind, first.hasPrefix("`"), first.hasSuffix("`") else { continue }
            rows.append(Row(kind: kind, interface: interface, name: String(first.dropFirst().dropLast()), cells: cells, line: number))
        }
        return rows
    }

    /// `` `s domain, s key` `` (or `–`) as arguments.
    static func arguments(_ cell: String) -> [Introspection.Argument] {
        let text = cell.trimmingCharacters(in: CharacterSet(charactersIn: "` "))
        guard text != "–", !text.isEmpty else { return [] }
        return text.components(separatedBy: ", ").map { part in
            let words = part.split(separator: " ", maxSplits: 1).map(String.init)
            return Introspection.Argument(type: words[0], name: words.count > 1 ? words[1] : "")
        }
    }

    @Test("every method, signal and property of prefsd's interfaces in the XML has its row, with the XML's arguments, and no row names anything else")
    func pageMatchesXML() throws {
        let page = try MarkdownPage("docs/interface.md")
        let introspection = try Introspection.load()
        let rows = Self.rows(of: page)
        #expect(!rows.isEmpty, "docs/interface.md has no member tables")
        for row in rows {
            guard let member = introspection.member(row.interface, row.name), member.kind == row.kind else {
                Issue.record("\(page.place(row.line)): \(row.kind.rawValue) \(row.interface).\(row.name) is not in the Introspection XML")
                continue
            }
            switch row.kind {
            case .method:
                #expect(
                    row.cells.count >= 3 && Self.arguments(row.cells[1]) == member.inputs,
                    "\(page.place(row.line)): \(row.name) takes \(member.inputs) in the XML")
                #expect(
                    row.cells.count >= 3 && Self.arguments(row.cells[2]) == member.outputs,
                    "\(page.place(row.line)): \(row.name) answers \(member.outputs) in the XML")
            case .signal:
                #expect(
                    row.cells.count >= 2 && Self.arguments(row.cells[1]) == member.inputs,
                    "\(page.place(row.line)): \(row.name) carries \(member.inputs) in the XML")
            case .property:
                #expect(
                    row.cells.count >= 3 && row.cells[1] == "`\(member.inputs.first?.type ?? "")`" && row.cells[2] == member.access,
                    "\(page.place(row.line)): \(row.name) is `\(member.inputs.first?.type ?? "")`, \(member.access) in the XML")
            }
        }
        for member in introspection.members
        where member.interface.hasPrefix("io.github.prefsd.")
            && !rows.contains(where: { $0.interface == member.interface && $0.name == member.name && $0.kind == member.kind })
        {
            Issue.record("docs/interface.md has no row for the \(member.kind.rawValue) \(member.interface).\(member.name)")
        }
    }

    @Test("the page lists every error prefsd answers, and no other")
    func errorsMatch() throws {
        let page = try MarkdownPage("docs/interface.md")
        var named: Set<String> = []
        for (_, line) in page.prose {
            var rest = Substring(line)
            while let range = rest.range(of: #"io\.github\.prefsd\.Preferences1\.Error\.[A-Za-z]+"#, options: .regularExpression) {
                named.insert(String(rest[range].dropFirst(PreferencesErrorName.prefix.count)))
                rest = rest[range.upperBound...]
            }
        }
        let answered = Set(PreferencesErrorName.allCases.compactMap(\.shortName))
        #expect(
            named == answered,
            "docs/interface.md names \(named.subtracting(answered).sorted()) that prefsd does not answer and leaves out \(answered.subtracting(named).sorted())"
        )
    }
}
