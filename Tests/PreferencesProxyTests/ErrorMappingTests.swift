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
            #expect(proxied == PreferencesProxyError(refusal) && proxied.refusal == refusal)
            #expect(proxied.description == "m")
            #expect(!proxied.isServiceUnavailable)
        }
        #expect(PreferencesProxyError(errorName: PreferencesErrorName.forced.busName, message: "locked") == PreferencesProxyError(.forced("locked")))
        #expect(PreferencesRefusal(busErrorName: "org.example.Other", message: "m") == nil)
        #expect(PreferencesRefusal(PreferencesModelError.invalidKey("", reason: "empty")).busErrorName == PreferencesErrorName.invalidName.busName)
    }

    @Test("a refusal a newer prefsd adds reads as a refusal of its own name; patterns match refusals by name")
    func newerRefusal() {
        let name = PreferencesErrorName.prefix + "TooManyCooks"
        let error = PreferencesProxyError(errorName: name, message: "one at a time")
        #expect(error.refusal == PreferencesRefusal(PreferencesErrorName(rawValue: name), "one at a time"))
        #expect(error.description == "one at a time")
        #expect(error.failure == .refused(PreferencesErrorName(rawValue: name)))
        #expect(error.failure?.concernsOneKey == false, "an unknown refusal is not retried key by key")
        let matched: String =
            switch error {
            case .refused(.notFound): "not found"
            case .refused(.forced): "forced"
            case .refused: "another refusal"
            default: "not a refusal"
            }
        #expect(matched == "another refusal")
        let notFound = PreferencesProxyError(errorName: PreferencesErrorName.notFound.busName, message: "m")
        guard case .refused(.notFound) = notFound else {
            Issue.record("NotFound does not match .refused(.notFound): \(notFound)")
            return
        }
    }
}
