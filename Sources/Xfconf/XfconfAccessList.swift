/// A `locked` or `unlocked` list of an administrator's channel file: user names and
/// `@group`s separated by `;` (`alice;@staff`).
public struct XfconfAccessList: Sendable, Hashable, CustomStringConvertible {
    /// The list as the file spells it.
    public let text: String

    /// The list spelled `text`.
    public init(_ text: String) { self.text = text }

    /// Whether the list names the user `user` or a group in `groups`, as xfconfd decides:
    /// `groups` are the groups whose member list (`/etc/group`'s fourth field) names the user.
    public func names(user: String, groups: Set<String>) -> Bool {
        text.split(separator: ";", omittingEmptySubsequences: true).contains { entry in
            entry.first == "@" ? groups.contains(String(entry.dropFirst())) : entry == user
        }
    }

    /// The list as the file spells it.
    public var description: String { text }
}

/// Who an administrator's channel file lets change a channel or a property.
public enum XfconfRestriction: Sendable, Hashable {
    /// `locked="…"`: the users and groups listed cannot change it.
    case locked(XfconfAccessList)
    /// `unlocked="…"`: only the users and groups listed can change it (xfconfd uses it when
    /// a file has both).
    case unlocked(XfconfAccessList)

    /// Whether the user `user`, a member of `groups`, cannot change what is restricted.
    public func locks(user: String, groups: Set<String>) -> Bool {
        switch self {
        case .locked(let list): list.names(user: user, groups: groups)
        case .unlocked(let list): !list.names(user: user, groups: groups)
        }
    }

    /// The restriction of an element's `locked` and `unlocked` attributes, as xfconfd reads
    /// them: a non-empty `unlocked` wins, then a non-empty `locked`; `nil` when neither.
    init?(locked: String?, unlocked: String?) {
        if let unlocked, !unlocked.isEmpty {
            self = .unlocked(XfconfAccessList(unlocked))
        } else if let locked, !locked.isEmpty {
            self = .locked(XfconfAccessList(locked))
        } else {
            return nil
        }
    }
}
