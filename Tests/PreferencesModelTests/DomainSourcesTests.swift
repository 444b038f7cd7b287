import PreferencesModel
import Testing

@Suite("Argument and language domains, and the search list")
struct DomainSourcesTests {
    @Test("-Key value pairs, with property-list values where they parse")
    func arguments() {
        let domain = ArgumentDomain.parse([
            "-AppleLanguages", "(de, fr)", "-Size", "12", "-Name", "Mono Bold", "file.txt",
            "-Dict", "{ a = 1; b = (x); }", "-Flag", "-Negative", "-5", "-Quoted", "\"(not a list)\"",
            "-Broken", "(a, b", "--", "-After", "x",
        ])
        #expect(domain["AppleLanguages"] == .array([.string("de"), .string("fr")]))
        #expect(domain["Size"] == .string("12"))
        #expect(domain["Name"] == .string("Mono Bold"))
        #expect(domain["Dict"] == .dictionary(["a": .string("1"), "b": .array([.string("x")])]))
        #expect(domain["Flag"] == nil)
        #expect(domain["Negative"] == .string("-5"))
        #expect(domain["Quoted"] == .string("(not a list)"))
        #expect(domain["Broken"] == .string("(a, b"))
        #expect(domain["After"] == nil)
        #expect(domain.count == 7)
    }

    @Test(
        "language domain from the locale environment",
        arguments: [
            (["LANG": "de_DE.UTF-8"], ["de-DE"], "de_DE"),
            (["LANGUAGE": "fr:de", "LANG": "fr_FR.UTF-8"], ["fr", "de"], "fr_FR"),
            (["LC_ALL": "pt_BR.UTF-8", "LANG": "en_US.UTF-8"], ["pt-BR"], "pt_BR"),
            (["LC_MESSAGES": "sv_SE", "LANG": "en_US.UTF-8"], ["sv-SE"], "sv_SE"),
            ([:], ["en"], "en_US_POSIX"),
            (["LANG": "C.UTF-8", "LANGUAGE": "de"], ["en"], "en_US_POSIX"),
        ])
    func languages(_ environment: [String: String], _ languages: [String], _ locale: String) {
        let domain = LanguageDomain.make(environment: environment)
        #expect(domain["AppleLanguages"] == .array(languages.map { .string($0) }))
        #expect(domain["AppleLocale"] == .string(locale))
    }

    @Test("suites keep their order and never repeat the application or global domain")
    func searchList() throws {
        var list = SearchList(application: try DomainName("com.example.App"))
        list.addSuite(try DomainName("group.b"))
        list.addSuite(try DomainName("group.a"))
        list.addSuite(try DomainName("group.b"))
        list.addSuite(.global)
        list.addSuite(try DomainName("com.example.App"))
        #expect(list.serviceDomains.map(\.rawValue) == ["com.example.App", "group.b", "group.a", "NSGlobalDomain"])
        list.removeSuite(try DomainName("group.b"))
        #expect(list.suites.map(\.rawValue) == ["group.a"])
    }
}
