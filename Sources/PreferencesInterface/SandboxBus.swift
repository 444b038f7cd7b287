/// The names of prefsd's door for sandboxed applications: a second bus name, owned by a
/// second connection of prefsd, whose signals go to each subscriber alone.
///
/// A Flatpak application is given `--talk-name=io.github.prefsd.Sandboxed1` (and not the
/// main name): xdg-dbus-proxy then lets it call this name and receive signals addressed to
/// it, but none of the broadcasts the main name sends about every domain.
public enum SandboxBus {
    /// The well-known bus name sandboxed applications talk to.
    public static let busName = "io.github.prefsd.Sandboxed1"
    /// The interface of the subscription methods, served only on ``busName``.
    public static let interface = "io.github.prefsd.Sandboxed1"
    /// `Subscribe(as domains)`: the caller receives the signals about these domains, sent
    /// to it alone; an empty list means every domain the caller may read.
    public static let subscribeMethod = "Subscribe"
    /// `Unsubscribe(as domains)`: the opposite of `Subscribe`, with the same arguments.
    public static let unsubscribeMethod = "Unsubscribe"
    /// The signature of both methods' arguments.
    public static let subscriptionSignature = "as"
    /// The most domains one peer may subscribe to (the empty list counts as one).
    public static let maximumSubscriptionsPerPeer = 256
}
