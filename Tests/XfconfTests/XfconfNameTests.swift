import PreferencesModel
import Testing
import Xfconf

@Suite("xfconf channel and property names ↔ prefsd domains and keys")
struct XfconfNameTests {
    @Test("a channel is the domain xfconf.C and back", arguments: ["xfwm4", "xsettings", "xfce4-panel", "thunar-volman", "A.b_c-9", ".dot", "-dash"])
    func channelDomain(name: String) throws {
        let channel = try XfconfChannel(name)
        #expect(channel.domain.rawValue == "xfconf." + name)
        #expect(XfconfChannel(domain: channel.domain) == channel)
    }

    @Test(
        "names xfconfd refuses and names prefsd cannot carry are refused, each saying why",
        arguments: [
            ("", "empty"), ("a b", "other than"), ("a/b", "other than"), ("é", "other than"), ("a\u{0}b", "other than"),
            ("a:b", "prefsd's domain names cannot carry"), ("a{b}", "prefsd's domain names cannot carry"),
            ("a|b", "prefsd's domain names cannot carry"), ("a,b", "prefsd's domain names cannot carry"),
            ("[a]", "prefsd's domain names cannot carry"),
            (String(repeating: "c", count: 249), "over prefsd's limit of 248"),
        ])
    func channelRefused(name: String, reason: String) {
        #expect(throws: XfconfError.self) { try XfconfChannel(name) }
        #expect(XfconfChannel.problem(with: name)?.contains(reason) == true, "\(XfconfChannel.problem(with: name) ?? "accepted")")
    }

    @Test("the longest channel name prefsd carries makes a valid domain")
    func longestChannel() throws {
        let channel = try XfconfChannel(String(repeating: "c", count: XfconfChannel.maximumLength))
        #expect(channel.domain.rawValue.utf8.count == 255)
    }

    @Test("domains outside xfconf. are no channel's")
    func otherDomains() throws {
        #expect(XfconfChannel(domain: try DomainName("com.example.Editor")) == nil)
        #expect(XfconfChannel(domain: try DomainName("xfconf")) == nil)
        #expect(XfconfChannel(domain: try DomainName("xfconf.")) == nil)
    }

    @Test(
        "a property /a/b is the key a/b and back",
        arguments: [
            ("/general/theme", "general/theme"), ("/a", "a"), ("/Net/ThemeName", "Net/ThemeName"),
            ("/panels/panel-1/position", "panels/panel-1/position"), ("/x{1}<2>|[3],4:5.6_7-8", "x{1}<2>|[3],4:5.6_7-8"),
        ])
    func propertyKey(path: String, key: String) throws {
        let property = try XfconfProperty(path)
        #expect(property.key == key)
        #expect(XfconfProperty(key: key) == property)
    }

    @Test(
        "property names xfconfd refuses are refused with its reasons",
        arguments: [
            ("", "must start with a '/'"), ("a/b", "must start with a '/'"), ("/", "root element"),
            ("/a//b", "consecutive"), ("/a/", "cannot end"), ("/a b", "can only include"), ("/é", "can only include"),
            ("/" + String(repeating: "k", count: 1025), "over prefsd's limit of 1025"),
        ])
    func propertyRefused(path: String, reason: String) {
        #expect(throws: XfconfError.self) { try XfconfProperty(path) }
        #expect(XfconfProperty.problem(with: path)?.contains(reason) == true, "\(XfconfProperty.problem(with: path) ?? "accepted")")
    }

    @Test("the longest property name fills a prefsd key")
    func longestProperty() throws {
        let property = try XfconfProperty("/" + String(repeating: "k", count: PreferenceKey.maximumLength))
        #expect(PreferenceKey.problem(with: property.key) == nil)
    }

    @Test("a property holds itself and those below it, not its siblings")
    func holds() throws {
        let a = try XfconfProperty("/a")
        #expect(a.holds(try XfconfProperty("/a")))
        #expect(a.holds(try XfconfProperty("/a/b/c")))
        #expect(!a.holds(try XfconfProperty("/ab")))
        #expect(!(try XfconfProperty("/a/b")).holds(a))
        #expect(try XfconfProperty("/a/b/c").components == ["a", "b", "c"])
    }
}
