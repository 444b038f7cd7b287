import Foundation
import PrefsdTestSupport

extension ServiceFixture {
    /// A prefsd started with `arguments` on its own bus, once it owns `name` as well (dconf's
    /// or xfconf's, which it takes after its store is loaded).
    static func serving(_ name: String, arguments: [String]) async throws -> ServiceFixture {
        let fixture = try await ServiceFixture(arguments: arguments)
        let deadline = ContinuousClock.now + .seconds(30)
        while fixture.bus.processID(owning: name) != fixture.pid {
            guard ContinuousClock.now < deadline else { throw FixtureError("prefsd did not own \(name) within 30 s: \(fixture.log)") }
            try await Task.sleep(for: .milliseconds(20))
        }
        return fixture
    }
}
