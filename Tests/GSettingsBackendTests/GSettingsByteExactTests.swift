import Foundation
import PrefsdTestSupport
import Testing

/// Contract 0.3 through real GLib programs: a GSettings value that differs from the stored
/// one in any byte (NFC `é` then NFD `é`, `0.0` then `-0.0`) is stored, reaches the other
/// programs' `changed` signals and reads back as written.
@Suite("GSettings backend: values compare byte for byte", .serialized)
struct GSettingsByteExactTests {
    static let nfc = "caf\u{E9}"
    static let nfd = "cafe\u{301}"

    static func hex(_ text: String) -> String { text.utf8.map { String(format: "%02x", $0) }.joined() }

    /// A GSettings program that prints each `changed` signal of `text` and `real` as the
    /// value's bytes (UTF-8, or the double's big-endian bits), and ends when `int32` becomes 99.
    static let byteWatcher = """
        import struct
        s = Gio.Settings.new('org.example.Test')
        loop = GLib.MainLoop()
        def show(key):
            if key == 'text': return s.get_string('text').encode('utf-8').hex()
            if key == 'real': return struct.pack('>d', s.get_double('real')).hex()
            return str(s.get_value(key).print_(False))
        def changed(settings, key):
            print('changed', key, show(key), flush=True)
            if key == 'int32' and settings.get_int('int32') == 99:
                loop.quit()
        s.connect('changed', changed)
        print('ready', show('text'), show('real'), flush=True)
        loop.run()
        """

    /// Reads `text` and `real` in a new program, as their bytes.
    static let byteReader = """
        import struct
        s = Gio.Settings.new('org.example.Test')
        print(s.get_string('text').encode('utf-8').hex(), struct.pack('>d', s.get_double('real')).hex())
        """

    private func stop(_ process: Process) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    @Test("`gsettings set` of NFC then NFD text, and of 0.0 then -0.0, is stored and seen by other programs")
    func respelled() async throws {
        let service = try await ServiceFixture()
        let fixture = try GSettingsFixture(service: service)
        #expect(try fixture.gsettings("set", GSettingsFixture.schema, "text", "'\(Self.nfc)'").status == 0)
        #expect(try fixture.gsettings("set", GSettingsFixture.schema, "real", "0.0").status == 0)

        let (watcher, output) = try fixture.startPython(Self.byteWatcher)
        defer { stop(watcher) }
        try await waitFor("ready \(Self.hex(Self.nfc)) 0000000000000000", in: output)

        for (key, value) in [("text", "'\(Self.nfd)'"), ("real", "-0.0"), ("text", "'\(Self.nfd)'"), ("real", "-0.0"), ("int32", "99")] {
            let set = try fixture.gsettings("set", GSettingsFixture.schema, key, value)
            #expect(set.status == 0, "gsettings set \(key) \(value): \(set.stderr)")
        }
        // The sentinel: changes arrive in commit order, so every earlier one has arrived.
        try await waitFor("changed int32 99", in: output)
        let lines = try String(contentsOf: output, encoding: .utf8).split(separator: "\n").map(String.init)
        // The two rewrites of the same bytes change nothing and are not announced.
        #expect(
            lines == [
                "ready \(Self.hex(Self.nfc)) 0000000000000000",
                "changed text \(Self.hex(Self.nfd))",
                "changed real 8000000000000000",
                "changed int32 99",
            ])

        let read = try fixture.python(Self.byteReader)
        #expect(read.stdout == "\(Self.hex(Self.nfd)) 8000000000000000\n", "\(read.stderr)")
        let got = try fixture.gsettings("get", GSettingsFixture.schema, "text")
        #expect(Array(got.stdout.utf8) == Array("'\(Self.nfd)'\n".utf8))
    }

    @Test("a dictionary with keys in both normalisations is kept whole (as tagged text)")
    func normalisedKeys() async throws {
        let service = try await ServiceFixture()
        let fixture = try GSettingsFixture(service: service)
        let set = try fixture.gsettings("set", GSettingsFixture.schema, "names", "{'\(Self.nfc)': 'one', '\(Self.nfd)': 'two'}")
        #expect(set.status == 0, "\(set.stderr)")
        let read = try fixture.python(
            """
            s = Gio.Settings.new('org.example.Test')
            v = s.get_value('names')
            print(v.n_children(), ' '.join(v.get_child_value(i).get_child_value(0).get_string().encode('utf-8').hex() for i in range(v.n_children())))
            """)
        #expect(read.stdout == "2 \(Self.hex(Self.nfc)) \(Self.hex(Self.nfd))\n", "\(read.stderr)")
    }
}
