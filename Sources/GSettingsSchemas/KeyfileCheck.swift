import DconfFormats

/// What GSettings makes of a dconf system database (the keyfiles of `/etc/dconf/db/NAME.d`
/// and its `locks/`): each value and lock judged against the installed schemas, as
/// GSettings on dconf reads them once `dconf update` has compiled them. A value is read
/// when it is GVariant text of the key's own type and the schema takes it (its range, its
/// choices, an alias of a nick); anything else is ignored, silently: GSettings reads the
/// default.
public struct KeyfileCheck {
    /// One file of the database: its path, and its contents.
    public struct File: Sendable {
        /// The file's path, for the findings.
        public let path: String
        /// Its bytes.
        public let bytes: [UInt8]

        /// A file.
        public init(path: String, bytes: [UInt8]) {
            self.path = path
            self.bytes = bytes
        }
    }

    /// Something of the database GSettings would ignore.
    public struct Finding: Sendable, Equatable {
        /// The file.
        public let file: String
        /// The line, from 1.
        public let line: Int
        /// What is wrong, with what would work when there is such a line.
        public let message: String
    }

    /// How many values and locks were checked, and what GSettings would ignore of them.
    public struct Result: Sendable, Equatable {
        /// The values checked.
        public var values = 0
        /// The locks checked.
        public var locks = 0
        /// The findings, by file and line.
        public var findings: [Finding] = []

        /// Nothing checked yet.
        public init() {}
    }

    private let schemas: SchemaSource
    private let stored = StoredSettings()

    /// A check against `schemas`.
    public init(schemas: SchemaSource) {
        self.schemas = schemas
    }

    /// Checks one database: its keyfiles (in the order `dconf update` reads them) and its
    /// locks files.
    public func check(keyfiles: [File], locks: [File]) -> Result {
        var result = Result()
        var assignments: [(file: String, assignment: DconfKeyfile.Assignment, key: String)] = []
        for file in keyfiles {
            let (read, problems) = DconfKeyfile.read(file.bytes)
            for problem in problems {
                result.findings.append(Finding(file: file.path, line: problem.line, message: problem.message + "; `dconf update` refuses the database over it"))
            }
            for assignment in read {
                let directory = assignment.group == "/" ? "/" : "/" + assignment.group + "/"
                assignments.append((file.path, assignment, directory + assignment.name))
            }
        }
        var lockLines: [(file: String, lock: DconfLocksFile.Lock)] = []
        for file in locks {
            let (read, problems) = DconfLocksFile.read(file.bytes)
            result.findings += problems.map { Finding(file: file.path, line: $0.line, message: $0.message) }
            lockLines += read.map { (file.path, $0) }
        }
        // A relocatable schema is told by the keys a directory holds (``RelocatedPaths``).
        var namesByDirectory: [String: Set<String>] = [:]
        for key in assignments.map(\.key) + lockLines.map(\.lock.key) {
            let (directory, name) = Self.split(key)
            namesByDirectory[directory, default: []].insert(name)
        }
        let place = { (key: String) -> Place in self.place(of: key, names: namesByDirectory) }
        for (file, assignment, key) in assignments {
            result.values += 1
            if let message = judge(assignment, key: key, place: place(key)) {
                result.findings.append(Finding(file: file, line: assignment.line, message: message))
            }
        }
        for (file, lock) in lockLines {
            result.locks += 1
            switch place(lock.key) {
            case .key: continue
            case .unknown(let why, let hint):
                result.findings.append(
                    Finding(file: file, line: lock.line, message: "the lock of \(lock.key): \(why), so it locks nothing GSettings reads\(hint)"))
            }
        }
        result.findings.sort { ($0.file, $0.line) < ($1.file, $1.line) }
        return result
    }

    /// Where a full key is in the installed schemas.
    private enum Place {
        /// The key `key` of `settings`' schema.
        case key(SchemaKey, SchemaSettings)
        /// No schema key: why, and where to look (`; …`, or nothing).
        case unknown(String, hint: String)
    }

    private func place(of key: String, names: [String: Set<String>]) -> Place {
        let (directory, name) = Self.split(key)
        let relocated = schemas.fixedSchema(atPath: directory) == nil
        guard let schema = schemas.fixedSchema(atPath: directory) ?? RelocatedPaths.schema(for: directory, keyNames: names[directory] ?? [], in: schemas) else {
            return .unknown("no installed schema has it", hint: "")
        }
        guard let schemaKey = schema.keysByName[name] else {
            return .unknown("\(schema.id) (at \(directory)) has no key \(name)", hint: "; `prefs gsettings list-keys \(schema.id)` lists its keys")
        }
        return .key(schemaKey, stored.settings(schema, path: relocated ? directory : nil))
    }

    /// What GSettings makes of the value of `assignment` (the full key `key`): `nil` when
    /// it reads it, else why not and what would work.
    private func judge(_ assignment: DconfKeyfile.Assignment, key: String, place: Place) -> String? {
        let schemaKey: SchemaKey
        let settings: SchemaSettings
        switch place {
        case .unknown(let why, let hint): return "\(key): \(why), so GSettings reads nothing of it\(hint)"
        case .key(let found, let at): (schemaKey, settings) = (found, at)
        }
        let choices = schemaKey.choices == .any ? "" : ", \(schemaKey.allowedDescription)"
        let wants = "\(settings.schema.id) wants \(Self.typeName(schemaKey.type))\(choices)"
        let fix = schemaKey.valueOfItsType(assignment.text).map { "; write \(assignment.name)=\($0.text)" } ?? ""
        let written: SchemaValue
        do {
            written = try SchemaValue.parsing(assignment.text, key: key)
        } catch {
            let detail = if case .unparsable(_, _, let detail) = error { detail } else { error.description }
            return "\(key): \(assignment.text) is not GVariant text (\(detail)), so `dconf update` refuses the whole database; \(wants)\(fix)"
        }
        stored.setDconfValue(written, at: key)
        if settings.readsUserValue(schemaKey.name) { return nil }
        let dropped = "GSettings ignores it and reads the default, \(settings.value(schemaKey.name).text)"
        if written.type != schemaKey.type {
            return "\(key): \(assignment.text) is \(Self.typeName(written.type)) where \(wants), so \(dropped)\(fix)"
        }
        return "\(key): \(assignment.text) is not among what \(settings.schema.id) takes for it (\(schemaKey.allowedDescription)), so \(dropped)"
    }

    /// The directory of a full key (ending in `/`) and the key's name.
    private static func split(_ key: String) -> (directory: String, name: String) {
        guard let slash = key.lastIndex(of: "/") else { return ("/", key) }
        return (String(key[...slash]), String(key[key.index(after: slash)...]))
    }

    /// A GVariant type for a sentence: `a uint32`, `a string`, `a value of type (ii)`.
    static func typeName(_ type: String) -> String {
        switch type {
        case "b": "a boolean"
        case "y": "a byte"
        case "n": "an int16"
        case "q": "a uint16"
        case "i": "an int32"
        case "u": "a uint32"
        case "x": "an int64"
        case "t": "a uint64"
        case "d": "a double"
        case "s": "a string"
        case "o": "an object path"
        case "as": "an array of strings (as)"
        default: "a value of type \(type)"
        }
    }
}
