/// The exit statuses of `prefs`, one per kind of outcome, so scripts can tell them apart.
///
/// | status | meaning |
/// | --- | --- |
/// | 0 | success |
/// | 1 | the domain or key does not exist (or `find` found nothing) |
/// | 2 | usage error: unknown verb or option, missing or extra arguments, a value that does not parse |
/// | 3 | the key is forced by an administrator (managed preferences) |
/// | 4 | a size limit of prefsd would be passed |
/// | 5 | prefsd refused a domain name, key or value as invalid |
/// | 6 | prefsd could not write to its store |
/// | 7 | a volatile domain of that name exists already |
/// | 69 | no session bus, or prefsd is not running and cannot be started |
/// | 70 | prefsd answered something unexpected |
/// | 74 | a file to import or export could not be read or written |
public enum PrefsExitCode: Int32, Sendable, CaseIterable {
    /// Everything went as asked.
    case success = 0
    /// The domain or key does not exist.
    case notFound = 1
    /// The command line is wrong.
    case usage = 2
    /// The key is forced by an administrator.
    case forced = 3
    /// A size limit would be passed.
    case quotaExceeded = 4
    /// A name or value was refused as invalid.
    case invalid = 5
    /// The service could not write to disk.
    case storageFailed = 6
    /// A domain of that name exists already.
    case exists = 7
    /// No bus, or no service on it (`EX_UNAVAILABLE`).
    case unavailable = 69
    /// The service answered something unexpected (`EX_SOFTWARE`).
    case internalError = 70
    /// A file could not be read or written (`EX_IOERR`).
    case fileError = 74

    /// One line for the `--help` text and the README.
    public var summary: String {
        switch self {
        case .success: "success"
        case .notFound: "the domain or key does not exist (or `find` found nothing)"
        case .usage: "usage error: unknown verb or option, missing arguments, a value that does not parse"
        case .forced: "the key is forced by an administrator (managed preferences)"
        case .quotaExceeded: "a size limit of prefsd would be passed"
        case .invalid: "prefsd refused the domain name, key or value as invalid"
        case .storageFailed: "prefsd could not write to its store"
        case .exists: "a volatile domain of that name exists already"
        case .unavailable: "no session bus, or prefsd is not running and cannot be started"
        case .internalError: "prefsd answered something unexpected"
        case .fileError: "a file to import or export could not be read or written"
        }
    }
}

/// Everything that makes `prefs` fail, each with the exit status it maps to and a
/// one-line message that says what to do.
public enum PrefsError: Error, Sendable, CustomStringConvertible {
    /// The domain does not exist.
    case domainNotFound(String)
    /// The key does not exist in the domain.
    case keyNotFound(domain: String, key: String)
    /// The volatile domain does not exist, or (with `key`) holds no such key.
    case volatileNotFound(domain: String, key: String?)
    /// `find` found no domain, key or value containing the word.
    case nothingFound(String)
    /// The history holds nothing to undo or restore; the text says what is missing.
    case noHistory(String)
    /// The command line is wrong; the text says how.
    case usage(String)
    /// The key is forced by an administrator; `detail` is the service's message.
    case forced(domain: String, detail: String)
    /// A size limit would be passed; `detail` is the service's message.
    case quotaExceeded(detail: String)
    /// A name or value was refused; `detail` says which and why.
    case invalid(detail: String)
    /// The service could not write to its store; `detail` is the service's message.
    case storageFailed(detail: String)
    /// A domain of that name exists already.
    case exists(domain: String, detail: String)
    /// There is no session bus, or the bus could not be reached.
    case noBus(detail: String)
    /// prefsd is not running and the bus cannot start it, or it did not answer.
    case serviceUnavailable(detail: String)
    /// prefsd answered something `prefs` does not understand.
    case unexpectedReply(String)
    /// A file could not be read or written.
    case file(path: String, reason: String)

    /// The exit status this error ends `prefs` with.
    public var exitCode: PrefsExitCode {
        switch self {
        case .domainNotFound, .keyNotFound, .volatileNotFound, .nothingFound, .noHistory: .notFound
        case .usage: .usage
        case .forced: .forced
        case .quotaExceeded: .quotaExceeded
        case .invalid: .invalid
        case .storageFailed: .storageFailed
        case .exists: .exists
        case .noBus, .serviceUnavailable: .unavailable
        case .unexpectedReply: .internalError
        case .file: .fileError
        }
    }

    /// One line saying what went wrong and what to do about it.
    public var description: String {
        let text: String
        switch self {
        case .domainNotFound(let domain):
            text = "the domain \(domain) does not exist; `prefs domains` lists the domains"
        case .keyNotFound(let domain, let key):
            text = "the key \"\(key)\" does not exist in the domain \(domain); `prefs read \(domain)` lists its keys"
        case .volatileNotFound(let domain, nil):
            text = "there is no volatile domain \(domain); `prefs volatile list` lists them"
        case .volatileNotFound(let domain, let key?):
            text = "the key \"\(key)\" does not exist in the volatile domain \(domain); `prefs volatile read \(domain)` lists its keys"
        case .nothingFound(let word):
            text = "no domain, key or value contains \"\(word)\""
        case .noHistory(let detail):
            text = "\(detail); `prefs history DOMAIN` shows what the history holds"
        case .usage(let reason):
            text = "\(reason); see `prefs help`"
        case .forced(let domain, let detail):
            text = "\(detail) (an administrator manages \(domain): ask them, or read the value with `prefs read`)"
        case .quotaExceeded(let detail):
            text = "\(detail) (store a smaller value, or remove keys you no longer need)"
        case .invalid(let detail):
            text = detail
        case .storageFailed(let detail):
            text = "\(detail) (check the free space and permissions of prefsd's store directory, then retry)"
        case .exists(let domain, let detail):
            text = detail.isEmpty ? "a domain named \(domain) exists already; pick another name or remove it first" : detail
        case .noBus(let detail):
            text = detail
        case .serviceUnavailable(let detail):
            text = detail
        case .unexpectedReply(let detail):
            text = "prefsd answered something unexpected: \(detail); check that prefsd and prefs are the same version"
        case .file(let path, let reason):
            text = "cannot use the file \(path): \(reason)"
        }
        return Self.oneLine(text)
    }

    /// `text` with line breaks and control characters turned into spaces, so a message
    /// always stays on one line.
    static func oneLine(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? " " : $0 }))
    }
}
