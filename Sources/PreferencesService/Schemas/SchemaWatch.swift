import Dispatch
import Foundation
import GSettingsSchemas
import Logging
import Synchronization

/// The installed GSettings schemas the service holds values to (see
/// `DomainState+Schemas.swift`), followed while it runs. GLib's own schema source is read
/// once per process and never again; this one watches every schema directory
/// (``ServiceConfiguration/schemaDirectories``, made or not), and when one changes reads
/// the schemas again on its queue and puts the new index in place of the old. An index is
/// never changed: a call takes the one in place, without holding any lock while it uses it.
/// The first reading runs on the queue too, beside the rest of prefsd's start: only a
/// change that comes before it is done waits for it.
final class SchemaWatch: Sendable {
    /// The directories, highest precedence first.
    let directories: [String]
    private let logger: Logger
    private let index = Mutex(SchemaIndex.empty)
    /// Left once the first reading is done.
    private let firstReading = DispatchGroup()
    private let watchers = Mutex<[DirectoryWatcher]>([])
    /// Whether a reading is scheduled and not yet begun.
    private let scheduled = Mutex(false)
    /// Reads the schemas again, one reading at a time.
    private let queue = DispatchQueue(label: "prefsd.schemas")

    /// Starts reading the schemas of `directories` (none: an empty index, and nothing to watch).
    init(directories: [String], logger: Logger) {
        self.directories = directories
        self.logger = logger
        guard !directories.isEmpty else { return }
        firstReading.enter()
        queue.async { [self] in
            read(reason: "start")
            firstReading.leave()
        }
    }

    /// The schemas in force, once the first reading is done.
    var current: SchemaIndex {
        firstReading.wait()
        return index.withLock { $0 }
    }

    /// Starts watching the directories.
    func start() {
        let started = directories.map { directory in
            DirectoryWatcher(directory: URL(fileURLWithPath: directory, isDirectory: true)) { [weak self] in self?.schedule() }
        }
        for (directory, watcher) in zip(directories, started) where watcher.mode != .inotify {
            logger.debug("polling a schema directory every second", metadata: ["directory": "\(directory)"])
        }
        watchers.withLock { $0 = started }
    }

    /// Stops watching.
    func stop() {
        for watcher in watchers.withLock({ $0 }) { watcher.cancel() }
    }

    /// Reads the schemas again soon, once for a burst of changes in any directory.
    private func schedule() {
        guard
            scheduled.withLock({ wasScheduled in
                defer { wasScheduled = true }
                return !wasScheduled
            })
        else { return }
        queue.async { [self] in
            scheduled.withLock { $0 = false }
            read(reason: "a schema directory changed")
        }
    }

    /// Reads the schemas, puts them in force and logs what was read (on the queue).
    private func read(reason: String) {
        let found = SchemaIndex(directories: directories)
        index.withLock { $0 = found }
        logger.info(
            "read the installed GSettings schemas",
            metadata: [
                "reason": "\(reason)", "schemas": "\(found.schemaCount)", "keys": "\(found.keyCount)", "from": "\(found.directories.joined(separator: ":"))",
            ])
        for (directory, problem) in found.problems.sorted(by: { $0.key < $1.key }) {
            logger.warning(
                "compiled GSettings schemas that GLib cannot read are left out; values of their keys are not checked",
                metadata: ["directory": "\(directory)", "error": "\(problem)"])
        }
    }
}
