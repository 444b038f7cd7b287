import PreferencesProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// Who is behind a connection calling the service, as far as access goes.
///
/// A process whose root holds `/.flatpak-info` is the Flatpak application named there.
/// Inside Flatpak the peer prefsd sees is xdg-dbus-proxy, which runs in the application's
/// sandbox, so its root shows the application's file too.
public enum CallerIdentity: Sendable, Hashable, CustomStringConvertible {
    /// A process of the host: full access.
    case host
    /// A Flatpak application: its own domain and suites, and `NSGlobalDomain` to read.
    case application(String)
    /// The caller could not be told apart (no process ID, an unreadable root): refused
    /// everything, with the reason.
    case unidentified(String)

    /// Tells who runs process `pid` by reading `/proc/PID/root/.flatpak-info`. Only a
    /// root without the file makes a host process; a process that no longer exists is
    /// ``Identification/departed(_:)`` (the caller decides what that allows), and a root
    /// that cannot be opened for another reason, or a file that cannot be read or names no
    /// valid application ID, is unidentified.
    ///
    /// This may block (a root on a FUSE file system whose server does not answer): callers
    /// run it off every shared queue and bound the wait (``CallerGate``).
    static func of(processID pid: UInt32, procRoot: String = "/proc") -> Identification {
        let root = "\(procRoot)/\(pid)/root"
        let descriptor = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let number = errno
            let reason = "cannot open \(root): \(String(cString: strerror(number)))"
            return number == ENOENT || number == ESRCH ? .departed("its process \(pid) exited (\(reason))") : .identified(.unidentified(reason))
        }
        close(descriptor)
        return switch FlatpakInfo.read(atPath: root + FlatpakInfo.path) {
        case .absent: .identified(.host)
        case .application(let info): .identified(.application(info.applicationID))
        case .unreadable(let reason): .identified(.unidentified(reason))
        }
    }

    /// For logs.
    public var description: String {
        switch self {
        case .host: "host"
        case .application(let id): "flatpak \(id)"
        case .unidentified(let reason): "unidentified (\(reason))"
        }
    }
}

/// What prefsd learned of a sender: who it is, or that it left before prefsd could tell.
enum Identification: Sendable, Hashable {
    /// The sender is this caller.
    case identified(CallerIdentity)
    /// The sender left the bus, or its process exited, before prefsd could tell who it was;
    /// the reason, for logs and refusals.
    ///
    /// Nothing tells who a departed sender was, so the connection its call came in on
    /// decides: on the main name, `io.github.prefsd.Preferences1`, it runs as the host's,
    /// because xdg-dbus-proxy lets a Flatpak application talk only to the names it was
    /// given, and no sandbox is given that one (the door and dconf's name are served on
    /// connections of their own); at the door, `io.github.prefsd.Sandboxed1`, and at dconf's
    /// name, `ca.desrt.dconf`, it is unidentified and refused, so a sandboxed sender gains
    /// nothing by leaving early. A host script's `dbus-send` without `--print-reply` (to the
    /// main name) lands.
    case departed(String)

    /// Whether the sender was found gone.
    var isDeparture: Bool {
        if case .departed = self { return true }
        return false
    }
}
