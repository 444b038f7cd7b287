import PreferencesProxy

/// What the window says when prefsd refuses a change.
enum ErrorMessages {
    /// A sentence for a refused write of `what` (a title or key).
    static func refused(_ what: String, _ error: PreferencesProxyError) -> String {
        "“\(what)” was not saved: \(reason(error))."
    }

    /// A sentence for an undo of `domainTitle`'s last change that did not go through.
    static func notUndone(_ domainTitle: String, _ error: PreferencesProxyError) -> String {
        if case .refused(.notFound) = error {
            return "The last change of “\(domainTitle)” was not undone: the history no longer reaches back to before it."
        }
        return "The last change of “\(domainTitle)” was not undone: \(reason(error))."
    }

    /// Why prefsd refused, as the end of a sentence.
    private static func reason(_ error: PreferencesProxyError) -> String {
        let reason: String
        switch error {
        case .refused(.forced): reason = "an administrator has locked this setting"
        case .refused(.quotaExceeded):
            reason = "it is too large for the preferences store (\(error.message))"
        case .refused(.invalidValue), .refused(.invalidName):
            reason = "prefsd refused it as invalid (\(error.message))"
        case .refused(.storageFailed):
            reason = "the preferences store could not save it (\(error.message))"
        case .serviceUnavailable: reason = "the preferences service is not reachable (\(error.message))"
        default: reason = error.description
        }
        return reason
    }

    /// What a setting holding only an administrator's default says (not the user's own value).
    static let administratorDefault = "Default set by your administrator"
    /// The reason a locked setting shows.
    static let lockedReason = "Locked by your administrator (managed preferences or a dconf lock); it cannot be changed here."
}
