import Foundation
import Testing

/// Every relative link of the README and the docs/ pages leads somewhere.
@Suite("README and docs/ links")
struct LinkTests {
    @Test("every relative link resolves to a file, and every #anchor to a heading", arguments: Repository.pages)
    func linksResolve(page name: String) throws {
        let page = try MarkdownPage(name)
        let directory = page.url.deletingLastPathComponent()
        for link in page.links {
            let target = link.target
            if target.isEmpty || target.contains("://") || target.hasPrefix("mailto:") { continue }
            let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let path = parts[0]
            let file = path.isEmpty ? page.url : directory.appendingPathComponent(path).standardizedFileURL
            guard FileManager.default.fileExists(atPath: file.path) else {
                Issue.record("\(page.place(link.line)): the link \(target) leads to no file (\(file.path))")
                continue
            }
            guard parts.count == 2 else { continue }
            guard file.pathExtension == "md" else {
                Issue.record("\(page.place(link.line)): the link \(target) has an anchor into a file that is not Markdown")
                continue
            }
            let targetPage = try MarkdownPage(file.path.replacingOccurrences(of: Repository.root.standardizedFileURL.path + "/", with: ""))
            #expect(
                targetPage.anchors.contains(parts[1]),
                "\(page.place(link.line)): the link \(target) names no heading of \(targetPage.name) (its anchors: \(targetPage.anchors.sorted().joined(separator: ", ")))"
            )
        }
    }

    @Test("the README is at most 400 lines and names no issue numbers")
    func readmeShape() throws {
        let readme = try MarkdownPage("README.md")
        #expect(readme.lines.count <= 401, "README.md has \(readme.lines.count) lines")
        for name in Repository.pages {
            let page = try MarkdownPage(name)
            for (index, line) in page.lines.enumerated() where line.range(of: #"[Ii]ssue \d+|issue #\d+"#, options: .regularExpression) != nil {
                Issue.record("\(page.place(index + 1)): refers to an issue number: \(line)")
            }
        }
    }
}
