import ArgumentParser
import Foundation
import PrefsCommand
import PrefsdTestSupport
import Testing

/// The example commands of the README and docs/ pages.
///
/// The pages mark what is what by the fence's language:
/// - ```` ```sh ````: examples that run as shown. The tests run a page's `sh` blocks in
///   order, as a reader would, each command in `sh` on a private bus with its own prefsd
///   (the page's), `prefs` on `PATH` and a fresh home directory; each must exit 0, or the
///   status its comment names (`# exits 1`). `export` lines carry over to the commands after.
/// - ```` ```text ```` right after an `sh` block: what that block's last command prints,
///   compared exactly.
/// - ```` ```shell ````: commands shown but not run (set-up, `sudo`, long-running ones):
///   each `prefs` command must parse, each bus call must name a member of the
///   Introspection XML with its arguments.
@Suite("README and docs/ example commands", .serialized)
struct ExampleTests {
    @Test("the sh blocks run in order on a private bus, and print what the text blocks after them show", arguments: Repository.pages)
    func runnableExamples(page name: String) async throws {
        let page = try MarkdownPage(name)
        let blocks = page.blocks
        guard blocks.contains(where: { $0.language == "sh" }) else { return }
        let fixture = try await ServiceFixture()
        let home = fixture.bus.directory.appendingPathComponent("home", isDirectory: true)
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        try installModuleAsMakeInstallWould(home: home)
        var exports: [String] = []
        for (index, block) in blocks.enumerated() where block.language == "sh" {
            var last: (line: ShellLine, stdout: String)?
            for line in try ShellLine.lines(of: block.lines, firstLine: block.firstLine) {
                checkBusCalls(line, page: page)
                if line.commands.first?.words.first == "export" {
                    exports.append(line.text)
                }
                let script = (["cd \"$HOME\" || exit 99"] + exports + [line.text]).joined(separator: "\n")
                let result = try runCommand("/bin/sh", ["-c", script], environment: environment(fixture, home: home))
                let expected = Self.expectedStatus(line.comment)
                #expect(
                    result.status == expected,
                    "\(page.place(line.line)): `\(line.text)` exited \(result.status), not \(expected): \(result.stderr)\(result.stdout)"
                )
                last = (line, result.stdout)
            }
            if index + 1 < blocks.count, blocks[index + 1].language == "text", blocks[index + 1].followsBlock, let last {
                let shown = blocks[index + 1].text.trimmingCharacters(in: .newlines)
                let printed = last.stdout.trimmingCharacters(in: .newlines)
                #expect(
                    printed == shown,
                    "\(page.place(last.line.line)): `\(last.line.text)` printed\n\(printed)\nwhere \(page.place(blocks[index + 1].firstLine)) shows\n\(shown)"
                )
            }
        }
    }

    @Test("the shell blocks parse: prefs commands as prefs parses them, bus calls against the Introspection XML", arguments: Repository.pages)
    func shownExamples(page name: String) throws {
        let page = try MarkdownPage(name)
        for block in page.blocks where block.language == "shell" {
            for line in try ShellLine.lines(of: block.lines, firstLine: block.firstLine) {
                checkBusCalls(line, page: page)
                for command in line.commands where command.words.first == "prefs" {
                    do {
                        _ = try Prefs.parseAsRoot(ArgumentNormalizer.normalize(Array(command.words.dropFirst())))
                    } catch  where Prefs.exitCode(for: error) == .success {
                        // --help, --version, --generate-completion-script: a clean exit.
                    } catch {
                        Issue.record("\(page.place(line.line)): `\(line.text)` does not parse: \(Prefs.message(for: error))")
                    }
                }
            }
        }
    }

    /// The status a command's comment says it exits with (`# exits 1 …`), else 0.
    static func expectedStatus(_ comment: String) -> Int32 {
        guard let range = comment.range(of: #"exits \d+"#, options: .regularExpression) else { return 0 }
        return Int32(comment[range].dropFirst(6)) ?? 0
    }

    /// The environment of a page's commands: the fixture's bus as the session bus, the
    /// built `prefs` first on `PATH`, `home` as the home and XDG directories.
    func environment(_ fixture: ServiceFixture, home: URL) -> [String: String] {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return [
            "DBUS_SESSION_BUS_ADDRESS": fixture.bus.address,
            "PATH": ServiceFixture.prefsBinary.deletingLastPathComponent().path + ":" + path,
            "HOME": home.path,
            "XDG_CONFIG_HOME": home.appendingPathComponent(".config").path,
            "XDG_DATA_HOME": home.appendingPathComponent(".local/share").path,
        ]
    }

    /// Puts the built GSettings module where `make install` puts it in `home`
    /// (`~/.local/lib/gio/modules`), so the pages' GSettings examples run as written.
    func installModuleAsMakeInstallWould(home: URL) throws {
        let built = Repository.root.appendingPathComponent(".build/gio-module/libgioprefsd.so")
        guard FileManager.default.fileExists(atPath: built.path) else {
            Issue.record("\(built.path) is missing: run scripts/build-gio-module first (scripts/run-tests does)")
            return
        }
        let modules = home.appendingPathComponent(".local/lib/gio/modules", isDirectory: true)
        try FileManager.default.createDirectory(at: modules, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: built, to: modules.appendingPathComponent("libgioprefsd.so"))
    }
}

/// Checks each prefsd call of `line` (`busctl call`, `dbus-send`, `gdbus call`) against the
/// Introspection XML: the member exists, with as many arguments (and for busctl, the
/// signature) as the XML gives it.
func checkBusCalls(_ line: ShellLine, page: MarkdownPage) {
    guard let introspection = try? Introspection.load() else {
        Issue.record("the Introspection XML could not be read")
        return
    }
    for command in line.commands {
        let words = command.words
        guard let tool = words.first else { continue }
        var interface = "", member = "", arguments: [String] = [], signature: String?
        switch tool {
        case "busctl":
            guard let call = words.firstIndex(where: { $0 == "call" || $0 == "get-property" }), call + 4 < words.count else { continue }
            interface = words[call + 3]
            member = words[call + 4]
            if words[call] == "call" {
                signature = call + 5 < words.count ? words[call + 5] : ""
                arguments = Array(words.dropFirst(call + 6))
            }
        case "dbus-send", "gdbus":
            let flag = tool == "gdbus" ? words.firstIndex(of: "-m").map { $0 + 1 } : nil
            guard
                let index = flag
                    ?? words.firstIndex(where: {
                        !$0.hasPrefix("-") && $0.hasPrefix("io.github.prefsd.") && $0 != "io.github.prefsd.Preferences1" && $0 != "io.github.prefsd.Sandboxed1"
                    }),
                index < words.count, let dot = words[index].lastIndex(of: ".")
            else { continue }
            interface = String(words[index][..<dot])
            member = String(words[index][words[index].index(after: dot)...])
            arguments = Array(words.dropFirst(index + 1))
        default:
            continue
        }
        guard interface.hasPrefix("io.github.prefsd.") else { continue }
        guard let declared = introspection.member(interface, member) else {
            Issue.record("\(page.place(line.line)): `\(line.text)` calls \(interface).\(member), which the Introspection XML does not declare")
            continue
        }
        if declared.kind == .property { continue }
        let inputs = declared.inputs.map(\.type).joined()
        if let signature, signature != inputs {
            Issue.record("\(page.place(line.line)): `\(line.text)` sends \(member) the signature '\(signature)', the XML takes '\(inputs)'")
        }
        if tool == "busctl" { continue }
        #expect(
            arguments.count == declared.inputs.count,
            "\(page.place(line.line)): `\(line.text)` gives \(member) \(arguments.count) arguments, the XML takes \(declared.inputs.count) (\(declared.inputs))"
        )
    }
}
