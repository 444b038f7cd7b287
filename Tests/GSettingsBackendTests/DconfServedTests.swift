import Foundation
import PreferencesModel
import PrefsdTestSupport
import Testing

/// GSettings on its stock dconf backend (Debian's `dconf-gsettings-backend`, no
/// `GSETTINGS_BACKEND=prefsd`) against prefsd serving dconf's name (`prefsd --dconf`).
@Suite("GSettings' own dconf backend against prefsd as dconf-service", .serialized)
struct DconfServedTests {
    @Test("gsettings set and get through dconf's module: the same lines as under dconf-service, the values in prefsd, prefsd's writes seen by GSettings")
    func sameAsDconfService() async throws {
        // The reference: Debian's dconf-service.
        let reference = try await ServiceFixture()
        let referenceSettings = try GSettingsFixture(service: reference)
        let dconf = try DconfFixture(settings: referenceSettings, service: reference)
        defer { dconf.stop() }
        let expected = try DconfMigrationTests.filled(dconf, referenceSettings)

        let service = try await ServiceFixture(arguments: ["--dconf"])
        let deadline = ContinuousClock.now + .seconds(30)
        while service.bus.processID(owning: "ca.desrt.dconf") != service.pid, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(service.bus.processID(owning: "ca.desrt.dconf") == service.pid, "prefsd did not take ca.desrt.dconf: \(service.log.suffix(2000))")
        let settings = try GSettingsFixture(service: service)
        let module = try DconfFixture(settings: settings, service: service)
        let profile = settings.directory.appendingPathComponent("dconf-profile")
        try "user-db:user\n".write(to: profile, atomically: true, encoding: .utf8)
        // dconf's clients and prefsd share the user's configuration and runtime directories.
        let environment = module.environment.merging([
            "XDG_CONFIG_HOME": service.bus.directory.appendingPathComponent("config").path,
            "XDG_RUNTIME_DIR": service.runtimeDirectory.path,
            "DCONF_PROFILE": profile.path,
        ]) { $1 }
        func gsettings(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
            try runCommand("gsettings", arguments, environment: environment)
        }
        for value in DconfMigrationTests.values {
            let set = try gsettings(["set", value.schema, value.key, value.text])
            #expect(set.status == 0, "gsettings set \(value.schema) \(value.key) \(value.text): \(set.stderr)")
        }
        let served = try DconfMigrationTests.listing { try gsettings($0) }
        for schema in DconfMigrationTests.schemas {
            #expect(served[schema] == expected[schema], "\(schema)\nprefsd:\n\(served[schema] ?? "")\ndconf-service:\n\(expected[schema] ?? "")")
        }

        let prefs = { (arguments: [String]) in try runCommand(ServiceFixture.prefsBinary.path, arguments, environment: environment) }
        #expect(try prefs(["read", "org.gnome.desktop", "interface/cursor-size"]).stdout == "33\n")
        #expect(try prefs(["write", "org.gnome.desktop", "interface/cursor-size", "-int", "48"]).status == 0)
        #expect(try gsettings(["get", "org.gnome.desktop.interface", "cursor-size"]).stdout == "48\n")
        #expect(try prefs(["write", "org.gnome.desktop", "session/idle-delay", "-int", "900"]).status == 0)
        #expect(try gsettings(["get", "org.gnome.desktop.session", "idle-delay"]).stdout == "uint32 900\n")
    }
}
