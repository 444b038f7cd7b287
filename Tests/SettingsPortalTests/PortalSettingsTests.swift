import DBus
import PreferencesModel
import SettingsPortal
import Testing

@Suite("What the portal backend serves from prefsd domains")
struct PortalSettingsTests {
    private let appearance = Appearance.namespace

    @Test("appearance values take the portal's types; others of the wrong type or range are not served")
    func appearanceTypes() {
        #expect(Appearance.portalValue(key: "color-scheme", .integer(1)) == .uint32(1))
        #expect(Appearance.portalValue(key: "color-scheme", .integer(3)) == nil)
        #expect(Appearance.portalValue(key: "color-scheme", .string("1")) == nil)
        #expect(Appearance.portalValue(key: "contrast", .integer(1)) == .uint32(1))
        #expect(Appearance.portalValue(key: "reduced-motion", .integer(-1)) == nil)
        #expect(
            Appearance.portalValue(key: "accent-color", .array([.real(0.5), .integer(1), .real(0)]))
                == .structure([.double(0.5), .double(1), .double(0)]))
        #expect(Appearance.portalValue(key: "accent-color", .array([.real(0.5), .real(1.5), .real(0)])) == nil)
        #expect(Appearance.portalValue(key: "accent-color", .array([.real(0.5), .real(1)])) == nil)
        #expect(Appearance.portalValue(key: "font-name", .string("Cantarell")) == nil)
    }

    @Test("an update announces what changed; removing an appearance key announces no preference")
    func updates() {
        var settings = PortalSettings()
        let first = settings.update(namespace: appearance, entries: ["color-scheme": .integer(1), "junk": .string("x")])
        #expect(first == [SettingChange(namespace: appearance, key: "color-scheme", value: .uint32(1))])
        #expect(settings.update(namespace: appearance, entries: ["color-scheme": .integer(1)]).isEmpty)
        #expect(settings.update(namespace: appearance, entries: [:]) == [SettingChange(namespace: appearance, key: "color-scheme", value: .uint32(0))])
        #expect(settings.readAll([]).isEmpty)

        _ = settings.update(namespace: "org.example.A", entries: ["k": .integer(2)])
        _ = settings.update(namespace: "org.other.B", entries: ["k": .boolean(true)])
        #expect(settings.read(namespace: "org.example.A", key: "k") == .int64(2))
        #expect(settings.readAll([NamespacePattern("org.example.*")]).keys.sorted() == ["org.example.A"])
        #expect(settings.update(namespace: "org.example.A", entries: nil).isEmpty, "the portal cannot announce a removal")
        #expect(settings.read(namespace: "org.example.A", key: "k") == nil)
    }

    @Test("ExposedDomains: valid domain names only, never the appearance or configuration domain")
    func exposedDomains() {
        let value = PropertyListValue.array([
            .string("org.example.A"), .string("../etc"), .integer(3), .string(Appearance.namespace),
            .string(PortalSettings.configurationDomain),
        ])
        #expect(PortalSettings.exposedDomains(from: value) == ["org.example.A"])
        #expect(PortalSettings.exposedDomains(from: .string("org.example.A")).isEmpty)
        #expect(PortalSettings.exposedDomains(from: nil).isEmpty)
    }
}
