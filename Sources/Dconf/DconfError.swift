/// Why dconf's protocol or files refuse something, with a message a person can act on.
public struct DconfError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, for the message of a D-Bus error or a log line.
    public let description: String
    /// Whether a file could not be written for lack of room on its disk (`ENOSPC`, `EDQUOT`).
    public let isLackOfRoom: Bool

    /// An error with this message; `lackOfRoom` when a file could not be written for lack
    /// of room.
    public init(_ description: String, lackOfRoom: Bool = false) {
        self.description = description
        isLackOfRoom = lackOfRoom
    }
}
