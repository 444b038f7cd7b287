import SettingsPortal
import Testing

@Suite("ReadAll namespace patterns")
struct NamespacePatternTests {
    @Test("exact names, trailing globs, and the empty entry or list that match everything")
    func matching() {
        #expect(NamespacePattern("org.freedesktop.appearance").matches("org.freedesktop.appearance"))
        #expect(!NamespacePattern("org.freedesktop.appearance").matches("org.freedesktop.appearance.extra"))
        #expect(NamespacePattern("org.example.*").matches("org.example.Editor"))
        #expect(!NamespacePattern("org.example.*").matches("org.examples"))
        #expect(NamespacePattern("").matches("anything"))
        #expect(NamespacePattern.any([], match: "anything"))
        #expect(!NamespacePattern.any([NamespacePattern("org.a")], match: "org.b"))
    }
}
