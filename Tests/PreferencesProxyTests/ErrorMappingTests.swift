import DBus
import PreferencesModel
import PreferencesProtocol
import Testing

@testable import PreferencesProxy

/// The service's refusals are listed once (`PreferencesRefusal`) and mapped once between
/// their D-Bus names and the cases both ends use.
@Suite struct ErrorMappingTests {
    @Test("every error name of the service reads back as the refusal it was sent as, and the proxy's error carries that refusal")
    func roundTrip() throws {
        let refusals: [PreferencesRefusal] = [
            .notFound("m"), .invalidName("m"), .invalidValue("m"), .forced("m"), .exists("m"),
            .quotaExceeded("m"), .storageFailed("m"), .accessDenied("m"), .invalidArguments("m"),
        ]
        // Every name of the contract is one refusal's.
        #expect(Set(refusals.map(\.busErrorName)) == Set(PreferencesErrorName.allCases.map(\.busName)).union([StandardErrorName.invalidArgs]))
        for refusal in refusals {
            #expect(PreferencesRefusal(busErrorName: refusal.busErrorName, message: "m") == refusal)
            let proxied = PreferencesProxyError(errorName: refusal.busErrorName, message: "m")
            #expect(proxied == .refused(refusal) && proxied.refusal == refusal)
            #expect(proxied.description == "m")
            #expect(!proxied.isServiceUnavailable)
        }
        #expect(PreferencesProxyError(errorName: PreferencesErrorName.forced.busName, message: "locked") == .refused(.forced("locked")))
        #expect(PreferencesRefusal(busErrorName: "org.example.Other", message: "m") == nil)
        #expect(PreferencesRefusal(PreferencesModelError.invalidKey("", reason: "empty")).busErrorName == PreferencesErrorName.invalidName.busName)
    }
}
