import Foundation
import PrefsdTestSupport
import Testing
import Xfconf

/// The administrator's channel files (`$XDG_CONFIG_DIRS/xfce4/xfconf/xfce-perchannel-xml`)
/// under `prefsd --xfconf`: defaults, and properties their `locked` lists lock.
@Suite("prefsd --xfconf reads the administrator's channel files as defaults and locks")
struct XfconfAdministratorChannelTests {
    private func gdbus(_ service: ServiceFixture, _ method: String, _ arguments: String...) throws -> (status: Int32, stdout: String, stderr: String) {
        try runCommand(
            "gdbus",
            [
                "call", "--address", service.bus.address, "--dest", "org.xfce.Xfconf", "--object-path", "/org/xfce/Xfconf", "--method",
                "org.xfce.Xfconf.\(method)",
            ]
                + arguments)
    }

    @Test("a default reads until the user sets a value; a property locked for this user (by name or group) cannot be set; one locked for others can")
    func defaultsAndLocks() async throws {
        let service = try ServiceFixture(activatable: ())
        let user = String(cString: getpwuid(getuid())!.pointee.pw_name)
        let folder = service.systemConfigDirectory.appendingPathComponent("xfce4/xfconf/xfce-perchannel-xml", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try """
        <?xml version="1.0" encoding="UTF-8"?>
        <channel name="xfwm4" version="1.0">
          <property name="general" type="empty">
            <property name="theme" type="string" value="Administrator's"/>
            <property name="title_font" type="string" value="Sans Bold 9" locked="\(user)"/>
            <property name="button_layout" type="string" value="O|HMC" locked="someone-else;@no-such-group"/>
            <property name="workspace_count" type="int" value="2" unlocked="someone-else"/>
          </property>
        </channel>
        """.write(to: folder.appendingPathComponent("xfwm4.xml"), atomically: true, encoding: .utf8)
        try "<channel name=\"broken\" version=\"1.0\"><property name=\"a\" type=\"int\" value=\"x\"/></channel>".write(
            to: folder.appendingPathComponent("broken.xml"), atomically: true, encoding: .utf8)
        // Hostile files beside them: a FIFO, a link to it, 100 MB (sparse). prefsd starts all the same.
        #expect(mkfifo(folder.appendingPathComponent("fifo.xml").path, 0o600) == 0)
        #expect(symlink("fifo.xml", folder.appendingPathComponent("link.xml").path) == 0)
        let huge = folder.appendingPathComponent("huge.xml").path
        #expect(FileManager.default.createFile(atPath: huge, contents: nil) && truncate(huge, 100 << 20) == 0)
        try await service.startService(arguments: ["--xfconf"])
        #expect(try await eventually(timeout: .seconds(30)) { service.bus.processID(owning: "org.xfce.Xfconf") != nil })

        #expect(try gdbus(service, "GetProperty", "xfwm4", "/general/theme").stdout == "(<\"Administrator's\">,)\n")
        #expect(try gdbus(service, "IsPropertyLocked", "xfwm4", "/general/theme").stdout == "(false,)\n")
        #expect(try gdbus(service, "SetProperty", "xfwm4", "/general/theme", "<'Mine'>").status == 0)
        #expect(try gdbus(service, "GetProperty", "xfwm4", "/general/theme").stdout == "(<'Mine'>,)\n")

        for locked in ["/general/title_font", "/general/workspace_count"] {
            #expect(try gdbus(service, "IsPropertyLocked", "xfwm4", locked).stdout == "(true,)\n")
            let refused = try gdbus(service, "SetProperty", "xfwm4", locked, "<'changed'>")
            #expect(refused.status != 0 && refused.stderr.contains("org.xfce.Xfconf.Error.PermissionDenied"), "\(refused.stderr)")
        }
        #expect(try gdbus(service, "GetProperty", "xfwm4", "/general/title_font").stdout == "(<'Sans Bold 9'>,)\n")
        #expect(try gdbus(service, "IsPropertyLocked", "xfwm4", "/general/button_layout").stdout == "(false,)\n")
        #expect(try gdbus(service, "SetProperty", "xfwm4", "/general/button_layout", "<'CMH|O'>").status == 0)

        // In prefsd's terms: forced keys, and defaults.
        #expect(try service.run(ServiceFixture.prefsBinary.path, ["is-forced", "xfconf.xfwm4", "general/title_font"]).stdout == "true\n")
        #expect(try service.run(ServiceFixture.prefsBinary.path, ["is-forced", "xfconf.xfwm4", "general/theme"]).stdout == "false\n")
        for name in ["broken", "fifo", "link", "huge"] { #expect(service.log.contains("\(name).xml"), "\(name)") }

        // A file the administrator adds while prefsd runs takes effect.
        try "<channel name=\"added\" version=\"1.0\"><property name=\"a\" type=\"string\" value=\"new\"/></channel>".write(
            to: folder.appendingPathComponent("added.xml"), atomically: true, encoding: .utf8)
        #expect(try await eventually(timeout: .seconds(20)) { try gdbus(service, "GetProperty", "added", "/a").stdout == "(<'new'>,)\n" })
        #expect(service.stopService() == 0)
    }
}
