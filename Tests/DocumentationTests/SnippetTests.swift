import Foundation
import PrefsdTestSupport
import Testing

/// The Swift snippets of the pages type-check against the package's own modules, as a
/// program's `main.swift` would (top-level code, `try await` allowed).
@Suite("README and docs/ Swift snippets")
struct SnippetTests {
    @Test("every swift block type-checks against the built modules", arguments: Repository.pages)
    func snippetsTypeCheck(page name: String) throws {
        let page = try MarkdownPage(name)
        // A manifest is checked by ProgramTests; a block marked as a file is that file, built with the package.
        let snippets = page.blocks.filter { $0.language == "swift" && !$0.text.contains("PackageDescription") && !$0.lineBefore.hasPrefix("<!--") }
        guard !snippets.isEmpty else { return }
        let compiler = try Self.swiftc()
        let binaries = ServiceFixture.prefsBinary.deletingLastPathComponent()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-snippet-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for block in snippets {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let file = directory.appendingPathComponent("main.swift")
            try block.text.write(to: file, atomically: true, encoding: .utf8)
            let dbusFlags = try runCommand("pkg-config", ["--cflags", "dbus-1"]).stdout
                .split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
            let arguments =
                [
                    "-typecheck", "-swift-version", "6", "-I", binaries.appendingPathComponent("Modules").path,
                    "-Xcc", "-fmodule-map-file=" + Repository.root.appendingPathComponent("Sources/CDBus/module.modulemap").path,
                ]
                + dbusFlags.flatMap { ["-Xcc", $0] } + [file.path]
            let result = try runCommand(compiler, arguments, timeout: .seconds(120))
            #expect(
                result.status == 0,
                "\(page.place(block.firstLine)): the Swift snippet does not type-check:\n\(Self.placed(result.stderr, file: file.path, page: page, block: block))"
            )
        }
    }

    /// The compiler's messages with the snippet's `main.swift:LINE:` turned into the page's `file:LINE:`.
    static func placed(_ messages: String, file: String, page: MarkdownPage, block: MarkdownPage.Block) -> String {
        messages.components(separatedBy: "\n").map { line in
            guard line.hasPrefix(file + ":") else { return line }
            let rest = line.dropFirst(file.count + 1)
            let number = rest.prefix { $0.isNumber }
            guard let snippetLine = Int(number) else { return line }
            return page.place(block.firstLine + snippetLine - 1) + rest.dropFirst(number.count)
        }.joined(separator: "\n")
    }

    /// `swiftc` beside the `swift` on `PATH`, or `$SWIFTC`.
    static func swiftc() throws -> String {
        if let path = ProcessInfo.processInfo.environment["SWIFTC"] { return path }
        if let found = try? findExecutable("swiftc") { return found }
        for candidate in ["/opt/swift/usr/bin/swiftc", "/usr/bin/swiftc"] where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        throw FixtureError("no swiftc on PATH to type-check the pages' Swift snippets: set SWIFTC")
    }
}
