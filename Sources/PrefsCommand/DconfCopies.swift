import Dconf
import Foundation

/// The copies of dconf's database kept beside it across switches: what prefsd took in
/// (`user.taken-in-TIME`, the newest ``takenInKept`` of them), and the database as prefsd
/// handed it back (`user.prefsd-handed-back`), which tells the next take-in which keys were
/// reset under dconf-service meanwhile.
enum DconfCopies {
    /// How many copies of what prefsd took in are kept.
    static let takenInKept = 3

    /// The paths of the copies of what prefsd took in, oldest first (their names end in the
    /// time of the take-in).
    static func takenIn(_ files: DconfFiles) -> [String] {
        let prefix = files.name + ".taken-in-"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: files.databaseDirectory)) ?? []
        // `user.taken-in-20261128T104512Z`, not a file being written beside one.
        return names.filter { $0.hasPrefix(prefix) && !$0.dropFirst(prefix.count).contains(".") }.sorted().map { files.databaseDirectory + "/" + $0 }
    }

    /// Removes all but the newest ``takenInKept`` copies of what prefsd took in; returns the
    /// paths removed.
    static func pruneTakenIn(_ files: DconfFiles) -> [String] {
        takenIn(files).dropLast(takenInKept).filter { unlink($0) == 0 }
    }

    /// Keeps the database as prefsd handed it back, for the next take-in: dconf's file when
    /// prefsd's is still there, else `latest`, the newest of prefsd's versions seen while it
    /// stopped (dconf-service has written its own since). Returns whether a copy was kept
    /// (not when prefsd had not written dconf's file).
    /// - Throws: ``PrefsError/file(path:reason:)`` when the copy cannot be written.
    static func handBack(_ files: DconfFiles, latest: [UInt8]?) throws(PrefsError) -> Bool {
        var watch = MirrorWatch(files: files, latest: latest)
        watch.look()
        guard let kept = watch.latest else { return false }
        do {
            try DconfFiles.replace(files.handedBackPath, with: kept, synced: true)
        } catch {
            throw .file(path: files.handedBackPath, reason: error.description)
        }
        return true
    }
}

/// The newest of prefsd's versions of dconf's file (those carrying its mark), looked at
/// while prefsd stops: once prefsd has let go of dconf's name, dconf-service may replace the
/// file at any moment.
struct MirrorWatch {
    /// dconf's files.
    let files: DconfFiles
    /// The newest of prefsd's versions seen.
    private(set) var latest: [UInt8]?
    /// The file last looked at: its device, inode, size and time of change.
    private var seen: [Int] = []

    /// A watch of dconf's file in `files`, starting from `latest` (prefsd's newest version
    /// seen by an earlier watch).
    init(files: DconfFiles, latest: [UInt8]? = nil) {
        self.files = files
        self.latest = latest
    }

    /// Reads dconf's file when it is another than the one last looked at, and keeps it when
    /// prefsd wrote it.
    mutating func look() {
        var status = stat()
        guard stat(files.databasePath, &status) == 0 else { return }
        let file = [
            Int(truncatingIfNeeded: status.st_dev), Int(truncatingIfNeeded: status.st_ino), status.st_size, status.st_mtim.tv_sec, status.st_mtim.tv_nsec,
        ]
        guard file != seen else { return }
        seen = file
        if let bytes = (try? files.readDatabase()) ?? nil, DconfMirror.isMirror(bytes) { latest = bytes }
    }
}
