import Dispatch
import Foundation
import PreferencesModel
import RegularFiles
import Synchronization

/// The sandboxed applications prefsd has served, by application ID, kept beside the store
/// (`sandboxed-applications`, one ID a line) so that they outlive a restart. Their domains
/// (each ID and its suites `ID.*`) are what prefsd keeps from every other sandboxed
/// application, so dconf's file, which any application allowed to read it reads whole,
/// leaves them out.
final class SandboxedApplications: Sendable {
    /// The list's file.
    let path: String
    private let known: Mutex<Set<String>>
    /// Writes the list, one write at a time, each with every ID known when it starts.
    private let writes = DispatchQueue(label: "prefsd.sandboxed-applications")

    /// The most IDs kept; past them a new application is not recorded (logged by the caller).
    static let maximumCount = 10_000

    /// The file's name in the store directory.
    static let fileName = "sandboxed-applications"

    /// The list kept in the store directory `storeDirectory`, read now: the names on it that
    /// are domain names (a missing, unreadable or oversized list holds none).
    init(storeDirectory: URL) {
        path = storeDirectory.appendingPathComponent(Self.fileName).path
        // An ID is at most 255 bytes, and a newline ends each.
        let names = Self.read(path, limit: Self.maximumCount * 256).map { String(decoding: $0, as: UTF8.self) } ?? ""
        known = Mutex(Set(names.split(separator: "\n").map(String.init).filter { (try? DomainName($0))?.rawValue == $0 }))
    }

    /// The bytes of the regular file at `path` (opened without following a link or
    /// waiting), or `nil` when there is none, it is something else, or it holds more than
    /// `limit` bytes.
    private static func read(_ path: String, limit: Int) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG,
            let data = try? handle.read(upToCount: limit + 1), data.count <= limit
        else { return nil }
        return [UInt8](data)
    }

    /// Every application ID on the list.
    var all: Set<String> { known.withLock { $0 } }

    /// Whether `domain` belongs to an application on the list: it is the application's ID,
    /// or a suite of it (`ID.*`).
    func owns(_ domain: DomainName) -> Bool {
        let name = domain.rawValue
        return known.withLock { known in
            if known.isEmpty { return false }
            if known.contains(name) { return true }
            var index = name.startIndex
            while let dot = name[index...].firstIndex(of: ".") {
                if known.contains(String(name[..<dot])) { return true }
                index = name.index(after: dot)
            }
            return false
        }
    }

    /// What ``note(_:)`` did.
    enum Noted: Equatable {
        /// The application was on the list already.
        case known
        /// The application is new, and on the list (in memory, and on disk unless `failure`).
        case added(failure: String?)
        /// The list is full (``maximumCount``): the application is not on it.
        case full
    }

    /// Puts `application` on the list, in memory at once and then on disk (synced) before
    /// it returns.
    func note(_ application: String) -> Noted {
        let added = known.withLock { known -> Noted in
            if known.contains(application) { return .known }
            guard known.count < Self.maximumCount else { return .full }
            known.insert(application)
            return .added(failure: nil)
        }
        guard added != .known, added != .full else { return added }
        return writes.sync {
            let text = all.sorted().map { $0 + "\n" }.joined()
            do {
                try ReplacementFile.replace(path, with: Array(text.utf8), synced: true)
                return .added(failure: nil)
            } catch {
                return .added(failure: "\(error)")
            }
        }
    }
}
