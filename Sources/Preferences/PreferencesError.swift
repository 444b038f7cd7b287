import PreferencesModel
import PreferencesProtocol
import PreferencesProxy

/// Why a preferences operation failed, in words a person can act on: the proxy's one
/// error for every client of prefsd (each refusal of the service, the same cases as
/// `PreferencesRefusal`, and `PreferencesProxyError.serviceUnavailable(_:)` for a
/// prefsd that cannot be reached).
public typealias PreferencesError = PreferencesProxyError

extension PreferencesProxyError {
    /// Whether the error is about what was written (a name, a value, a forced key, a quota)
    /// rather than about reaching prefsd or its disk: another write may still succeed.
    var concernsValues: Bool {
        switch self {
        case .serviceUnavailable, .storageFailed: false
        case .notFound, .invalidName, .invalidValue, .forced, .exists, .quotaExceeded, .accessDenied,
             .invalidArguments, .limitsExceeded, .invalidRequest, .contended, .unexpectedReply, .refused:
            true
        }
    }

    /// The same error (the library's calls fail with the proxy's errors as they are).
    init(_ error: PreferencesProxyError) {
        self = error
    }

    /// The error for a name or value the model refused.
    init(_ error: PreferencesModelError) {
        self.init(PreferencesRefusal(error))
    }
}
