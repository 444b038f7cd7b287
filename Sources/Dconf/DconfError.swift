/// Why dconf's protocol or files refuse something, with a message a person can act on.
public struct DconfError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, for the message of a D-Bus error or a log line.
    public let description: String

    /// An error with this message.
    public init(_ description: String) {
        self.description = description
    }
}
