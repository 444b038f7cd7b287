import PreferencesModel
import Testing

@Suite("Domain and key names")
struct DomainNameTests {
    @Test(
        "reverse-DNS names and NSGlobalDomain are accepted",
        arguments: [
            "com.example.Editor", "NSGlobalDomain", "a", "org.gnome_2-x", String(repeating: "a", count: 255),
        ])
    func accepted(_ name: String) throws {
        #expect(try DomainName(name).rawValue == name)
    }

    @Test(
        "names that could reach outside the store are refused",
        arguments: [
            "", "../x", "a/b", ".hidden", "-flag", String(repeating: "a", count: 256), "a\0b", "é", "a b", "..",
        ])
    func refused(_ name: String) {
        #expect(throws: PreferencesModelError.self) { try DomainName(name) }
        #expect(DomainName.problem(with: name) != nil)
    }

    @Test("the refusal says what is wrong")
    func message() {
        #expect(DomainName.problem(with: "a/b") == "it contains \"/\"")
        #expect(DomainName.problem(with: String(repeating: "x", count: 256))?.contains("256 bytes") == true)
    }

    @Test("keys: 1–1024 bytes of UTF-8 without NUL")
    func keys() {
        #expect(PreferenceKey.problem(with: "FontSize") == nil)
        #expect(PreferenceKey.problem(with: "ключ/with spaces") == nil)
        #expect(PreferenceKey.problem(with: String(repeating: "k", count: 1024)) == nil)
        #expect(PreferenceKey.problem(with: "") != nil)
        #expect(PreferenceKey.problem(with: String(repeating: "k", count: 1025)) != nil)
        #expect(PreferenceKey.problem(with: "a\0b") != nil)
    }

    @Test("keys are stored in normalization form C")
    func normalization() {
        let decomposed = "Caf\u{65}\u{301}"
        #expect(Array(PreferenceKey.normalized(decomposed).utf8) == Array("Caf\u{e9}".utf8))
        #expect(PreferenceKey.normalized("FontSize") == "FontSize")
    }
}
