import GRDB

/// Why the durable store could not do what was asked. Every description is a sentence a
/// person can act on.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    /// The store could not be opened or created at `path`; `reason` says why.
    case cannotOpen(path: String, reason: String)
    /// The database at `path` was written by a newer prefsd; it was refused and left untouched.
    case newerSchema(path: String)
    /// A transaction could not be written (disk full, file too large, I/O error, read-only
    /// store…) and was rolled back; `reason` says what to do.
    case writeFailed(reason: String)
    /// The stored data could not be read; `reason` says why.
    case readFailed(reason: String)
    /// A batch was refused whole, before anything of it was written: one of its keys or
    /// values breaks the rules every stored key and value obeys (`StoreRules.swift` in
    /// PreferencesModel); `reason` names it.
    case refused(reason: String)
    /// The store was closed.
    case closed

    /// A sentence a person can act on.
    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason):
            "cannot open the preferences store \(path): \(reason)"
        case .newerSchema(let path):
            "the preferences store \(path) was written by a newer version of prefsd; run that version, or move the file aside to start afresh"
        case .writeFailed(let reason):
            "cannot write the preferences store: \(reason)"
        case .readFailed(let reason):
            "cannot read the preferences store: \(reason)"
        case .refused(let reason):
            "the preferences store refused the change, and stored nothing of it: \(reason)"
        case .closed:
            "the preferences store is closed"
        }
    }
}

extension StoreError {
    /// Explains an SQLite (or other) error met while using the database file at `path` in
    /// `directory`, in words a person can act on.
    static func explain(_ error: any Error, path: String, directory: String) -> String {
        guard let error = error as? DatabaseError else { return "\(error)" }
        let detail = error.message.map { " (SQLite: \($0))" } ?? ""
        switch error.resultCode {
        case .SQLITE_FULL:
            return "the disk is full, or the store reached its size limit: free space on \(directory)\(detail)"
        case .SQLITE_IOERR:
            return "an input/output error occurred on \(path): check the disk and the file system\(detail)"
        case .SQLITE_READONLY:
            return "\(path) is read-only: check the permissions of the file and of \(directory), and that the file system is mounted read-write\(detail)"
        case .SQLITE_CANTOPEN:
            return "\(path) cannot be opened: check that \(directory) exists and is writable by this user\(detail)"
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            return "\(path) is damaged: restart prefsd to move it aside and start a fresh store\(detail)"
        case .SQLITE_TOOBIG:
            return "a value is too large for the store\(detail)"
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return "\(path) is locked by another process: stop the other prefsd using it\(detail)"
        case .SQLITE_PERM, .SQLITE_AUTH:
            return "access to \(path) was denied: check its permissions\(detail)"
        case .SQLITE_NOMEM:
            return "the system ran out of memory\(detail)"
        default:
            return "SQLite error \(error.extendedResultCode.rawValue) on \(path)\(detail)"
        }
    }

    /// Whether `error` means the file system is full.
    static func isDiskFull(_ error: any Error) -> Bool {
        (error as? DatabaseError)?.resultCode == .SQLITE_FULL
    }

    /// Whether `error` means the database file itself is damaged or is not a database.
    static func isCorruption(_ error: any Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        return error.resultCode == .SQLITE_CORRUPT || error.resultCode == .SQLITE_NOTADB
    }
}
