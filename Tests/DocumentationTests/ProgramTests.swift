import Foundation
import PrefsdTestSupport
import Testing

/// The Swift examples of the pages: the program is a file the package builds, and the
/// `Package.swift` lines a user copies name what the package has.
@Suite("README and docs/ Swift examples")
struct ProgramTests {
    /// A block preceded by `<!-- … path/to/file.swift … -->` is that file, character for character.
    @Test("a Swift block marked as a file is that file", arguments: Repository.pages)
    func blocksAreFiles(page name: String) throws {
        let page = try MarkdownPage(name)
        for block in page.blocks where block.lineBefore.hasPrefix("<!--") {
            guard let range = block.lineBefore.range(of: #"[A-Za-z0-9_./-]+\.swift"#, options: .regularExpression) else { continue }
            let path = String(block.lineBefore[range])
            let file = try String(contentsOf: Repository.root.appendingPathComponent(path), encoding: .utf8)
            #expect(
                block.text.trimmingCharacters(in: .newlines) == file.trimmingCharacters(in: .newlines),
                "\(page.place(block.firstLine)): the block is not the text of \(path); copy the file into the page"
            )
        }
    }

    @Test("the README's program runs against prefsd and prints what the README shows")
    func readmeProgramRuns() async throws {
        let page = try MarkdownPage("README.md")
        let blocks = page.blocks
        guard let index = blocks.firstIndex(where: { $0.language == "swift" && $0.lineBefore.contains("examples/preferences-program/main.swift") }) else {
            Issue.record("README.md shows no block marked as examples/preferences-program/main.swift")
            return
        }
        guard index + 1 < blocks.count, blocks[index + 1].language == "text" else {
            Issue.record("\(page.place(blocks[index].firstLine)): no text block after the program shows what it prints")
            return
        }
        let fixture = try await ServiceFixture()
        let result = try fixture.run(ServiceFixture.executable("preferences-program").path, [])
        #expect(result.status == 0, "preferences-program exited \(result.status): \(result.stderr)")
        #expect(
            result.stdout.trimmingCharacters(in: .newlines) == blocks[index + 1].text.trimmingCharacters(in: .newlines),
            "\(page.place(blocks[index + 1].firstLine)): the program printed\n\(result.stdout)"
        )
        // What it wrote is in prefsd, as another client reads it.
        #expect(try fixture.prefs("read", "com.example.Hello", "Greeting").stdout == "Bonjour\n")
        // Run again, it ends too (a change comes: it writes another greeting).
        let again = try fixture.run(ServiceFixture.executable("preferences-program").path, [])
        #expect(again.status == 0 && again.stdout == "Bonjour\nGreeting is now Salut\nsaved\n", "the second run printed \(again.stdout)\(again.stderr)")
    }

    @Test("the Package.swift lines for a library user name this package, its product and its tools version")
    func packageSnippet() throws {
        let manifest = try String(contentsOf: Repository.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let page = try MarkdownPage("README.md")
        guard let block = page.blocks.first(where: { $0.language == "swift" && $0.text.contains(".product(name:") }) else {
            Issue.record("README.md shows no Package.swift lines for a library user")
            return
        }
        let toolsLine = manifest.components(separatedBy: "\n")[0]
        #expect(block.lines.first == toolsLine, "\(page.place(block.firstLine)): the manifest starts with \(toolsLine)")
        #expect(manifest.contains("name: \"prefsd\""), "the package is no longer named prefsd")
        #expect(block.text.contains("package: \"prefsd\""), "\(page.place(block.firstLine)): the product's package is prefsd")
        // A path dependency is named after its folder unless given a name: named, a clone in
        // a folder of any name is the package `prefsd` the product line refers to.
        #expect(
            block.text.contains(".package(name: \"prefsd\", path: "),
            "\(page.place(block.firstLine)): the dependency is not named prefsd, so a clone in a folder of another name fails")
        #expect(block.text.contains(".product(name: \"Preferences\""), "\(page.place(block.firstLine)): the product is Preferences")
        #expect(manifest.contains(".library(name: \"Preferences\""), "Package.swift no longer has the product Preferences")
    }
}
