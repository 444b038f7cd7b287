import PreferencesProxy

/// What the window says when prefsd refuses a change.
enum ErrorMessages {
    /// A sentence for a refused write of `what` (a title or key).
    static func refused(_ what: String, _ error: PreferencesProxyError) -> String {
        let reason: String
        switch error {
        case .forced: reason = "an administrator has locked this setting"
        case .quotaExceeded(let message): reason = "it is too large for the preferences store (\(message))"
        case .invalidValue(let message), .invalidName(let message): reason = "prefsd refused it as invalid (\(message))"
        case .storageFailed(let message): reason = "the preferences store could not save it (\(message))"
        case .serviceUnavailable(let message): reason = "the preferences service is not reachable (\(message))"
        default: reason = error.description
        }
        return "“\(what)” was not saved: \(reason)."
    }

    /// The reason a locked setting shows.
    static let lockedReason = "Locked by your administrator (managed preferences); it cannot be changed here."
}
