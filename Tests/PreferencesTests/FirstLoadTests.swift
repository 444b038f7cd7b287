import BusTestSupport
import DBus
import PreferencesModel
import PreferencesProtocol
import PrefsdTestSupport
import Testing

@testable import Preferences

/// The first read of a domain costs one round trip: every call it takes is sent before
/// any answer is awaited.
@Suite struct FirstLoadTests {
    @Test("the first read sends ForcedKeys and ReadDomain of every domain searched before prefsd answers any")
    func oneRoundTrip() async throws {
        let bus = try PrivateBus()
        let prefsd = try await ScriptedPrefsd(bus: bus)
        let preferences = Preferences(
            applicationIdentifier: "com.example.OneTrip", arguments: [], environment: [:], busAddress: bus.address)
        // The read blocks until prefsd answers: on a thread of its own.
        let read = Task.detached { preferences.value(forKey: "Color") }
        let searched = preferences.layers.serviceDomains.map(\.rawValue)
        // Nothing is answered until every call has come: one round trip, whatever the number of domains.
        let calls = await prefsd.waitForCalls(2 * searched.count)
        let seen = calls.map { "\($0.member ?? "?") \($0.body.first?.stringValue ?? "?")" }.sorted()
        #expect(seen == searched.flatMap { ["ForcedKeys \($0)", "ReadDomain \($0)"] }.sorted())
        for call in calls {
            if call.member == "ForcedKeys" {
                try prefsd.answer(call, [.stringArray([])])
            } else {
                let values: [String: PropertyListValue] = call.body.first?.stringValue == "com.example.OneTrip" ? ["Color": .string("blue")] : [:]
                try prefsd.answer(call, [ScriptedPrefsd.dictionary(values)])
            }
        }
        #expect(await read.value == .string("blue"))
    }
}
