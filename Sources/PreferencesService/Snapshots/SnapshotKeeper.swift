import DBus
import Dispatch
import GSettingsSnapshots
import Glibc
import Logging
import PreferencesModel
import PreferencesProtocol
import Synchronization

/// The read-only snapshots of what a load of a domain answers (`ReadDomain` and
/// `ForcedKeys`), kept for the domains clients loaded, so that a GSettings program's first
/// read maps a file instead of waiting on the bus, as dconf's engine maps its database.
/// Layout and place: ``SnapshotLayout``.
///
/// **Never stale after an acknowledged change.** ``invalidate(_:)`` runs where every change
/// to what a domain reads becomes visible (before its signal is emitted, and so before its
/// reply): it flips the flag of the domain's snapshot in the file, which a reader checks
/// (with `pread`) on every read until its own load has arrived. Each snapshot file is
/// locked (an open file description lock, see ``SnapshotLayout``) from before it is named
/// for as long as this prefsd keeps it open, and a reader also tests that lock on every
/// read: a prefsd that dies without flipping anything (`kill -9`) leaves no valid snapshot,
/// wherever its directory is and whatever a later prefsd clears. A snapshot is written anew
/// only later, off the reply path: after a `ReadDomain` of the domain, on the keeper's own
/// queue. A snapshot being written is known (and so flipped by a change) before its content
/// is read from the state, so a change that the content misses always flips it.
///
/// The commit path pays a lock and, for a domain with a snapshot, one byte written (`pwrite`);
/// the checksum of a snapshot is computed when it is written, on the keeper's queue.
final class SnapshotKeeper: Sendable {
    /// One snapshot file, kept open to flip its flag and to hold its lock (released when
    /// the descriptor is closed, or by the kernel when prefsd exits). Written with `pwrite`,
    /// never through a mapping: a file another process truncated costs prefsd nothing.
    private final class File: Sendable {
        let descriptor: Int32

        init(descriptor: Int32) {
            self.descriptor = descriptor
        }

        /// Marks the snapshot stale, for every reader that mapped it.
        func flip() {
            var stale = SnapshotLayout.stale
            _ = pwrite(descriptor, &stale, 1, off_t(SnapshotLayout.flagOffset))
        }

        /// Whether the flag says stale (another prefsd cleared the directory).
        var isStale: Bool {
            var flag: UInt8 = 0
            return pread(descriptor, &flag, 1, off_t(SnapshotLayout.flagOffset)) != 1 || flag != SnapshotLayout.valid
        }

        func close() {
            Glibc.close(descriptor)
        }
    }

    private struct State {
        var enabled = false
        /// The snapshot of each domain that readers may map.
        var live: [String: File] = [:]
        /// The snapshot being written for a domain (flipped by a change like a live one).
        var pending: [String: File] = [:]
        /// Domains whose snapshot is to be written.
        var scheduled: Set<String> = []
        /// Stale snapshots no longer tracked, closed by the keeper's queue.
        var retired: [File] = []
        var written = 0
        /// The domains with a file in the directory (live or stale): at most
        /// ``maximumSnapshots`` names, so the directory stays bounded whatever is read.
        var files: Set<String> = []
        /// What a load of a domain answers, read from the service's state.
        var read: (@Sendable (String) -> [DBusValue]?)?
    }

    /// The most domains with a snapshot file at once.
    static let maximumSnapshots = 512

    /// The directory of this bus's snapshots.
    let directory: String
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "prefsd.snapshots", qos: .utility)
    private let logger: Logger

    /// A keeper of snapshots in `directory` (made mode 0700 when first needed).
    init(directory: String, logger: Logger) {
        self.directory = directory
        self.logger = logger
    }

    // MARK: Starting and stopping

    /// Flips every snapshot in `directory` stale and removes it: run before taking the bus
    /// name, so a reader never takes a snapshot an earlier prefsd left for what this one
    /// serves. Makes the directory (mode 0700) when it is missing; `false` when it cannot be
    /// used (not the user's, not a directory, not private).
    @discardableResult
    static func clear(directory: String) -> Bool {
        let parent = String(directory[..<(directory.lastIndex(of: "/") ?? directory.endIndex)])
        guard !parent.isEmpty, makePrivateDirectory(parent), makePrivateDirectory(directory),
            let listing = opendir(directory)
        else { return false }
        defer { closedir(listing) }
        while let entry = readdir(listing) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name != ".", name != ".." else { continue }
            let path = directory + "/" + name
            let descriptor = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
            if descriptor >= 0 {
                var stale = SnapshotLayout.stale
                var info = stat()
                if fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size > SnapshotLayout.flagOffset {
                    _ = pwrite(descriptor, &stale, 1, off_t(SnapshotLayout.flagOffset))
                }
                Glibc.close(descriptor)
            }
            unlink(path)
        }
        return true
    }

    /// Makes `path` a directory of the user's, mode 0700, or checks that it is one.
    private static func makePrivateDirectory(_ path: String) -> Bool {
        if mkdir(path, 0o700) != 0 && errno != EEXIST { return false }
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR, info.st_uid == getuid() else { return false }
        if info.st_mode & 0o077 != 0 { return chmod(path, 0o700) == 0 }
        return true
    }

    /// Clears what an earlier prefsd left (it may have run until just now) and starts
    /// keeping snapshots; `read` answers what a load of a domain answers, from the state.
    func start(read: @escaping @Sendable (String) -> [DBusValue]?) {
        guard Self.clear(directory: directory) else {
            logger.warning("snapshots are off: their directory cannot be made private", metadata: ["directory": "\(directory)"])
            return
        }
        state.withLock { state in
            state.read = read
            state.enabled = true
        }
    }

    /// Stops keeping snapshots: every one is flipped stale and removed, and the directory
    /// too (prefsd is going away; the next one starts from none). Returns the domains that
    /// had one, for ``warm(_:)`` at the next start.
    @discardableResult
    func stop() -> [String] {
        let (files, domains) = state.withLock { state -> ([File], [String]) in
            state.enabled = false
            let domains = state.files.sorted()
            let files = Array(state.live.values) + Array(state.pending.values) + state.retired
            state.live = [:]
            state.pending = [:]
            state.retired = []
            return (files, domains)
        }
        queue.sync {}
        for file in files {
            file.flip()
            file.close()
        }
        Self.clear(directory: directory)
        rmdir(directory)
        return domains
    }

    /// Writes the snapshots of `domains` (the domains an earlier prefsd had snapshots of:
    /// those a session reads at its start), on the keeper's queue, as if each had just
    /// been loaded: so the first GSettings program to read one after prefsd starts maps it
    /// instead of waiting on the bus. Within ``maximumSnapshots``, like every snapshot.
    func warm(_ domains: [String]) {
        for domain in domains { loaded(domain) }
    }

    // MARK: The two hooks

    /// A change to what `domain` reads is about to be answered or signalled: its snapshot
    /// (and one being written) is flipped stale.
    func invalidate(_ domain: String) {
        let (live, pending) = state.withLock { state in
            (state.live.removeValue(forKey: domain), state.pending.removeValue(forKey: domain))
        }
        guard live != nil || pending != nil else { return }
        // Flipped outside the lock (a write to the file); closed later by the queue.
        live?.flip()
        pending?.flip()
        state.withLock { state in
            if let live { state.retired.append(live) }
            if let pending { state.retired.append(pending) }
        }
    }

    /// `domain` was loaded (`ReadDomain` answered): its snapshot is written, on the keeper's
    /// queue, unless it has a valid one or one is on its way.
    func loaded(_ domain: String) {
        let live = state.withLock { $0.live[domain] }
        // A live snapshot flipped by another prefsd clearing the directory is written anew.
        if let live, !live.isStale { return }
        let schedule = state.withLock { state -> Bool in
            guard state.enabled, !state.scheduled.contains(domain), state.pending[domain] == nil,
                state.live[domain] === live
            else { return false }
            if let live {
                state.live[domain] = nil
                state.retired.append(live)
            }
            guard state.files.contains(domain) || state.files.count + state.scheduled.count < Self.maximumSnapshots else { return false }
            state.scheduled.insert(domain)
            return true
        }
        guard schedule else { return }
        queue.async { [self] in write(domain) }
    }

    // MARK: Writing a snapshot

    /// Writes the snapshot of `domain` (the keeper's queue): a new file, known as pending
    /// before its content is read, renamed over the old one, then live unless a change
    /// flipped it meanwhile.
    private func write(_ domain: String) {
        let retired = state.withLock { state -> [File] in
            defer { state.retired = [] }
            return state.retired
        }
        for file in retired { file.close() }
        guard let read = state.withLock({ $0.read }), SnapshotLayout.isFileName(domain) else {
            _ = state.withLock { $0.scheduled.remove(domain) }
            return
        }
        let serial = state.withLock { state -> Int in
            state.written += 1
            return state.written
        }
        let temporary = directory + "/.new-\(serial)"
        let path = directory + "/" + domain
        guard let file = Self.create(temporary) else {
            _ = state.withLock { $0.scheduled.remove(domain) }
            logger.debug("a snapshot could not be made", metadata: ["domain": "\(domain)", "errno": "\(errno)"])
            return
        }
        let registered = state.withLock { state -> Bool in
            state.scheduled.remove(domain)
            guard state.enabled, state.pending[domain] == nil else { return false }
            state.pending[domain] = file
            return true
        }
        guard registered else {
            unlink(temporary)
            file.close()
            return
        }
        // Read after the file is pending: a change after this read flips it.
        var written = false
        if let body = read(domain),
            let blob = try? DBusMessage.signal(
                path: PreferencesBus.objectPath, interface: PreferencesBus.interface,
                member: SnapshotLayout.member, body: body
            ).marshalled()
        {
            // The checksum and the body: neither touches the flag, which a change may have
            // flipped since the file was made.
            let header = SnapshotLayout.header(checksum: blob.withUnsafeBytes { SnapshotLayout.checksum($0) })
            let checksum = header[SnapshotLayout.checksumOffset..<SnapshotLayout.headerSize]
            written =
                checksum.withUnsafeBytes { bytes in
                    pwrite(file.descriptor, bytes.baseAddress, bytes.count, off_t(SnapshotLayout.checksumOffset)) == bytes.count
                }
                && blob.withUnsafeBytes { bytes in
                    pwrite(file.descriptor, bytes.baseAddress, bytes.count, off_t(SnapshotLayout.headerSize)) == bytes.count
                }
        }
        guard written, rename(temporary, path) == 0 else {
            unlink(temporary)
            let ours = state.withLock { state -> Bool in
                guard state.pending[domain] === file else { return false }
                state.pending[domain] = nil
                return true
            }
            if ours { file.close() }
            return
        }
        state.withLock { state in
            state.files.insert(domain)
            // Flipped meanwhile: retired by `invalidate`. Stopped: flipped and closed by `stop`.
            guard state.pending[domain] === file else { return }
            state.pending[domain] = nil
            state.live[domain] = file
        }
    }

    /// A new file at `path`, locked, holding a header whose flag says valid (its checksum
    /// is written with the body).
    private static func create(_ path: String) -> File? {
        let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        let header = SnapshotLayout.header(checksum: 0)
        // A read lock on the whole file, this open file description's: readers take the
        // snapshot only while it is held.
        var lock = flock()
        lock.l_type = Int16(F_RDLCK)
        lock.l_whence = Int16(SEEK_SET)
        let locked = fcntl(descriptor, SnapshotLayout.setLockCommand, &lock) == 0
        let wrote = locked && header.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) == $0.count }
        guard wrote else {
            Glibc.close(descriptor)
            unlink(path)
            return nil
        }
        return File(descriptor: descriptor)
    }
}
