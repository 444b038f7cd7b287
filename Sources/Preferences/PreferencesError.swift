import PreferencesModel
import PreferencesProtocol
import PreferencesProxy

/// Why a preferences operation failed, in words a person can act on: the proxy's one
/// error for every client of prefsd (a refusal of the service, of code `refused`, carrying
/// the `PreferencesRefusal`, and of code `serviceUnavailable` for a prefsd that cannot be
/// reached).
public typealias PreferencesError = PreferencesProxyError

extension PreferencesProxyError {
    /// The error for a name or value the model refused.
    init(_ error: PreferencesModelError) {
        self.init(PreferencesRefusal(error))
    }
}
