import Foundation
import PreferencesModel
import Testing

@testable import PreferencesService

@Suite("Reading dconf's keyfiles and locks")
struct DconfFileTests {
    private func read(_ text: String) -> (values: [MappedKey: PropertyListValue], problems: [FileProblem]) {
        DconfKeyfileReader.read(Array(text.utf8)) { _, _ in }
    }

    private func key(_ domain: String, _ key: String) throws -> MappedKey {
        MappedKey(domain: try DomainName(domain), key: key)
    }

    @Test("keyfile groups map through the path rule; the last line of a key wins; CRLF, blanks and comments are fine")
    func keyfile() throws {
        let (values, problems) = read(
            "# site\r\n[/]\r\ntop=1\r\n\r\n[org/gnome/desktop/interface]\r\n  gtk-theme = 'A'\r\ngtk-theme='B'\r\n[org/example/App]\r\nsize=(1, 2)\r\n")
        #expect(problems == [])
        #expect(values[try key("_", "top")] == .integer(1))
        #expect(values[try key("org.gnome.desktop", "interface/gtk-theme")] == .string("B"))
        #expect(values[try key("org.example.App", "size")] == .string("@(ii) (1, 2)"))
    }

    @Test("every bad line is reported with its number and the others are read")
    func badLines() {
        let (values, problems) = read("[org/example/App]\nok=1\nnonsense\n[x\nafter=2\n[org/example/App]\nbad='unterminated\nlast=3\n")
        #expect(values.count == 2)
        #expect(problems.map(\.line) == [3, 4, 5, 7])
    }

    @Test("locks: keys starting with /, the rest reported; not a key or not mappable reported")
    func locks() throws {
        let (keys, problems) = DconfLocksReader.read(
            Array("# locks\n/org/example/App/size\norg/example/App/x\n/org/example/App/\n /org/example/App/y\n\n".utf8))
        #expect(keys == [try key("org.example.App", "size")])
        #expect(problems.map(\.line) == [3, 4, 5])
    }
}
