#if canImport(Glibc)
import Glibc
#endif
import PreferencesProtocol

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
    /// root without the file makes a host process; a root that cannot be opened (the
    /// process is gone, or prefsd may not look) is unidentified, so a caller that exits
    /// right after calling is never taken for a host process.
    static func of(processID pid: UInt32, procRoot: String = "/proc") -> CallerIdentity {
        let root = "\(procRoot)/\(pid)/root"
        let descriptor = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else {
            return .unidentified("cannot open \(root): \(String(cString: strerror(errno)))")
        }
        close(descriptor)
        return switch FlatpakInfo.read(atPath: root + FlatpakInfo.path) {
        case .absent: .host
        case .application(let info): .application(info.applicationID)
        case .unreadable(let reason): .unidentified(reason)
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
