import DBus
import PreferencesModel
import SettingsPortal
import Testing

/// Contract 0.3 in the portal backend: a value that differs from the one served in any byte
/// is a change, announced with `SettingChanged`.
@Suite("The portal backend compares values byte for byte")
struct PortalByteExactTests {
    static let nfc = "caf\u{E9}"
    static let nfd = "cafe\u{301}"

    @Test("a respelled string or -0.0 after 0.0 is announced; the same bytes are not")
    func respelled() {
        var settings = PortalSettings()
        let namespace = "org.example.A"
        _ = settings.update(namespace: namespace, entries: ["s": .string(Self.nfc), "r": .real(0.0), "a": .array([.string(Self.nfc)])])
        let changes = settings.update(namespace: namespace, entries: ["s": .string(Self.nfd), "r": .real(-0.0), "a": .array([.string(Self.nfd)])])
        #expect(changes.map(\.key) == ["a", "r", "s"])
        let served = settings.read(namespace: namespace, key: "s")
        guard case .string(let text)? = served else {
            Issue.record("served \(String(describing: served))")
            return
        }
        #expect(Array(text.utf8) == Array(Self.nfd.utf8))
        guard case .double(let number)? = settings.read(namespace: namespace, key: "r") else {
            Issue.record("no real served")
            return
        }
        #expect(number.bitPattern == (-0.0 as Double).bitPattern)
        #expect(settings.update(namespace: namespace, entries: ["s": .string(Self.nfd), "r": .real(-0.0), "a": .array([.string(Self.nfd)])]).isEmpty)
    }
}
