import PreferencesModel
import PrefsdTestSupport
import Testing

/// xfconf's own calls as a source of changes: each reaches prefsd's `Changed` readers like a
/// change through prefsd's interface (the readers' table in docs/architecture.md).
@Suite("xfconf's changes reach prefsd's readers", .serialized)
struct XfconfChangeReadersTests {
    @Test("SetProperty and ResetProperty (xfconf-query -s, -r -R) send Changed for the channel's domain, in order")
    func changedForXfconfCalls() async throws {
        let server = try await XfconfServer(.prefsd)
        let collector = try await ChangedCollector(connection: try server.service.connect(), domains: ["xfconf.readers"])
        #expect(try server.query(["-c", "readers", "-p", "/panel/size", "-n", "-t", "int", "-s", "30"]).status == 0)
        #expect(try server.query(["-c", "readers", "-p", "/panel/size", "-s", "31"]).status == 0)
        #expect(try server.query(["-c", "readers", "-p", "/panel", "-r", "-R"]).status == 0)
        try await collector.wait(for: 3)
        let signals = collector.signals
        #expect(signals.map(\.domain) == ["xfconf.readers", "xfconf.readers", "xfconf.readers"], "\(signals)")
        #expect(signals.map(\.changed) == [["panel/size": .integer(30)], ["panel/size": .integer(31)], [:]], "\(signals)")
        #expect(signals.map(\.removed) == [[], [], ["panel/size"]], "\(signals)")
    }
}
