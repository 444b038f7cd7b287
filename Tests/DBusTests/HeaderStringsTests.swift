import Testing

@testable import DBus

/// Header strings are reused only for the same bytes (`HeaderStrings.swift`).
@Suite struct HeaderStringsTests {
    @Test func theSameBytesGiveTheRememberedStringOthersANewOne() {
        let strings = HeaderStrings()
        func string(_ text: String?, _ field: HeaderStrings.Field) -> String? {
            guard let text else { return strings.string(nil, field) }
            return text.withCString { strings.string($0, field) }
        }
        #expect(string(nil, .path) == nil)
        #expect(string("", .member) == "")
        let path = "/io/github/prefsd/Preferences1"
        #expect(string(path, .path) == path)
        #expect(string(path, .path) == path)
        // Same length, one byte apart; a prefix; a longer one; then back.
        #expect(string("/io/github/prefsd/Preferences2", .path) == "/io/github/prefsd/Preferences2")
        #expect(string("/io/github/prefsd", .path) == "/io/github/prefsd")
        #expect(string(path + "/x", .path) == path + "/x")
        #expect(string(path, .path) == path)
        // Each field remembers its own.
        #expect(string(":1.42", .sender) == ":1.42")
        #expect(string(":1.43", .destination) == ":1.43")
        #expect(string(":1.42", .sender) == ":1.42")
        #expect(string("héllo ✓", .member) == "héllo ✓")
        #expect(string("héllo ✓", .member) == "héllo ✓")
    }
}
