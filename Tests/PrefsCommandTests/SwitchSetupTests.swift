import Foundation
import Testing

@testable import PrefsCommand

/// The files `prefs dconf-switch` and `prefs xfconf-switch` write, one switch after the
/// other: one prefsd serving both, and either switch taken back leaving the other's.
@Suite("The switches' files: dconf and xfconf together")
struct SwitchSetupTests {
    /// A session's folders, in a new temporary folder.
    private func environment() throws -> [String: String] {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("switch-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        return ["HOME": home, "XDG_DATA_HOME": home + "/data", "XDG_CONFIG_HOME": home + "/config", "XDG_DATA_DIRS": home + "/none"]
    }

    private func text(_ url: URL) -> String? { try? String(contentsOf: url, encoding: .utf8) }

    @Test("dconf-switch then xfconf-switch: every file starts prefsd --dconf --xfconf; each switch-back leaves the other; the user's own file comes back")
    func both() throws {
        let environment = try environment()
        let prefsd = "/usr/bin/prefsd"
        var setup = SwitchSetup(prefsd: prefsd, environment: environment)
        let own = "[D-BUS Service]\nName=org.xfce.Xfconf\nExec=/usr/lib/xfconfd-of-my-own\n"
        try FileManager.default.createDirectory(at: setup.servicesDirectory, withIntermediateDirectories: true)
        try own.write(to: setup.serviceFile("org.xfce.Xfconf"), atomically: true, encoding: .utf8)

        _ = try setup.with(.dconf, on: true).install()
        setup = SwitchSetup(prefsd: prefsd, environment: environment)
        #expect(setup.protocols == [.dconf])
        _ = try setup.with(.xfconf, on: true).install()
        setup = SwitchSetup(prefsd: prefsd, environment: environment)
        #expect(setup.protocols == [.dconf, .xfconf])
        #expect(text(setup.serviceFile("io.github.prefsd.Preferences1"))?.contains("Exec='/usr/bin/prefsd' --dconf --xfconf\n") == true)
        // xfconf's name starts prefsd while it is installed, else the user's own xfconfd.
        let xfconf = text(setup.serviceFile("org.xfce.Xfconf")) ?? ""
        #expect(xfconf.contains("exec '/usr/bin/prefsd' --dconf --xfconf; fi; exec /usr/lib/xfconfd-of-my-own"), "\(xfconf)")
        #expect(text(URL(fileURLWithPath: setup.serviceFile("org.xfce.Xfconf").path + SwitchSetup.keptSuffix)) == own)
        // Again: nothing to write.
        #expect(try setup.install().isEmpty)

        _ = try setup.uninstall(.xfconf)
        setup = SwitchSetup(prefsd: prefsd, environment: environment)
        #expect(setup.protocols == [.dconf])
        #expect(text(setup.serviceFile("io.github.prefsd.Preferences1"))?.contains("Exec='/usr/bin/prefsd' --dconf\n") == true)
        #expect(text(setup.serviceFile("org.xfce.Xfconf")) == own)
        #expect(text(setup.unit)?.contains("BusName=ca.desrt.dconf") == true)

        _ = try setup.uninstall(.dconf)
        setup = SwitchSetup(prefsd: prefsd, environment: environment)
        #expect(setup.protocols.isEmpty)
        #expect(text(setup.serviceFile("io.github.prefsd.Preferences1")) == nil)
        #expect(text(setup.unit) == nil)
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: setup.loginLink.path)) == nil)
        #expect(text(setup.serviceFile("org.xfce.Xfconf")) == own)
    }
}
