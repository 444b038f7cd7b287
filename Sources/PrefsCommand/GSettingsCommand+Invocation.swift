import CGIO
import GSettingsSchemas

/// One `prefs gsettings` command line, read as gsettings reads its own (`gio/gsettings-tool.c`):
/// the same checks in the same order, each refusal with gsettings' message and status 1.
struct GSettingsInvocation {
    /// gsettings' verbs, each with the numbers of arguments it takes after its name.
    enum Verb: String, CaseIterable {
        case version = "--version"
        case listSchemas = "list-schemas"
        case listRelocatableSchemas = "list-relocatable-schemas"
        case listKeys = "list-keys"
        case listChildren = "list-children"
        case listRecursively = "list-recursively"
        case describe
        case range
        case get
        case set
        case reset
        case resetRecursively = "reset-recursively"
        case writable
        case monitor

        /// How many arguments may follow the verb.
        var argumentCounts: Set<Int> {
            switch self {
            case .version, .listRelocatableSchemas: [0]
            case .listSchemas: [0]
            case .listRecursively: [0, 1]
            case .listKeys, .listChildren, .resetRecursively: [1]
            case .describe, .range, .get, .reset, .writable: [2]
            case .set: [3]
            case .monitor: [1, 2]
            }
        }

        /// Whether the verb reads values (a GSettings object of the schema), so that the
        /// schema must be given as it is used: a relocatable one with a path, a fixed one
        /// without. The others describe the schema alone.
        var needsSettings: Bool {
            switch self {
            case .listKeys, .describe, .range: false
            default: true
            }
        }
    }

    /// The verb.
    let verb: Verb
    /// The schemas: the installed ones, and those of `--schemadir`.
    let source: SchemaSource
    /// The schema named, for the verbs that take one.
    let schema: Schema?
    /// The path given after the schema's id (`SCHEMA:PATH`), for a relocatable schema.
    let path: String?
    /// The key named, for the verbs that take one.
    let key: SchemaKey?
    /// The value, for `set`.
    let value: String?
    /// `list-schemas --print-paths`.
    let printsPaths: Bool

    /// Runs the command line `arguments` (everything after `gsettings`) and returns its exit
    /// status; errors of prefs's own (no bus, a refusal of prefsd's) are thrown.
    static func run(_ arguments: [String]) async throws -> Int32 {
        GSettingsText.useLocale()
        switch parse(arguments) {
        case .failure(let exit): return exit.status
        case .success(let invocation): return try await invocation.run()
        }
    }

    /// gsettings' own exit: its message printed, its status.
    struct Exit: Error {
        let status: Int32
    }

    /// The invocation `arguments` describe, or the exit gsettings takes for them (its
    /// message printed).
    static func parse(_ arguments: [String]) -> Result<GSettingsInvocation, Exit> {
        var arguments = arguments
        guard let first = arguments.first else { return .failure(Exit(status: GSettingsText.help(requested: false, command: nil))) }
        let source: SchemaSource
        if arguments.count > 2, first == "--schemadir" {
            do {
                source = try SchemaSource(addingDirectory: arguments[1])
            } catch {
                let detail = if case .unreadableDirectory(_, let detail) = error { detail } else { error.description }
                GSettingsText.printError(GSettingsText.message("Could not load schemas from %s: %s\n", arguments[1], detail))
                return .failure(Exit(status: 1))
            }
            arguments.removeFirst(2)
        } else {
            source = SchemaSource()
            if source.isEmpty { return refuse("No schemas installed\n") }
        }
        let name = arguments[0]
        if name == "help" { return .failure(Exit(status: GSettingsText.help(requested: true, command: arguments.dropFirst().first))) }
        let printsPaths = name == Verb.listSchemas.rawValue && arguments.count == 2 && arguments[1] == "--print-paths"
        guard let verb = Verb(rawValue: name), verb.argumentCounts.contains(arguments.count - 1) || printsPaths else {
            return .failure(Exit(status: GSettingsText.help(requested: false, command: name)))
        }
        var schema: Schema?
        var path: String?
        if arguments.count > 1, !printsPaths {
            let named = arguments[1]
            if named.isEmpty { return refuse("Empty schema name given\n") }
            let parts = named.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            schema = source.schema(parts[0])
            if parts.count > 1 {
                guard let found = schema else { return refuse("No such schema “%s”\n", parts[0]) }
                guard found.isRelocatable else { return refuse("Schema “%s” is not relocatable (path must not be specified)\n", parts[0]) }
                if let problem = pathProblem(parts[1]) { return refuse(problem) }
                path = parts[1]
            } else {
                guard let found = schema else { return refuse("No such schema “%s”\n", parts[0]) }
                if verb.needsSettings, found.isRelocatable { return refuse("Schema “%s” is relocatable (path must be specified)\n", parts[0]) }
            }
        }
        var key: SchemaKey?
        if arguments.count > 2, let schema {
            guard let found = schema.keysByName[arguments[2]] else { return refuse("No such key “%s”\n", arguments[2]) }
            key = found
        }
        return .success(
            GSettingsInvocation(
                verb: verb, source: source, schema: schema, path: path, key: key, value: arguments.count > 3 ? arguments[3] : nil,
                printsPaths: printsPaths))
    }

    /// gsettings' refusal `message` (with `arguments`), status 1.
    private static func refuse(_ message: String, _ arguments: String...) -> Result<GSettingsInvocation, Exit> {
        GSettingsText.printError(GSettingsText.message(message, arguments: arguments))
        return .failure(Exit(status: 1))
    }

    /// What is wrong with a relocatable schema's path, as gsettings says it; `nil` when
    /// nothing is.
    private static func pathProblem(_ path: String) -> String? {
        if path.isEmpty { return "Empty path given.\n" }
        if !path.hasPrefix("/") { return "Path must begin with a slash (/)\n" }
        if !path.hasSuffix("/") { return "Path must end with a slash (/)\n" }
        if path.contains("//") { return "Path must not contain two adjacent slashes (//)\n" }
        return nil
    }

    /// Runs the verb; returns its exit status.
    func run() async throws -> Int32 {
        switch verb {
        case .version:
            GSettingsText.print("\(glib_major_version).\(glib_minor_version).\(glib_micro_version)\n")
        case .listSchemas:
            let ids = source.ids.fixed
            let lines = printsPaths ? ids.map { $0 + " " + (source.schema($0)?.path ?? "") } : ids
            GSettingsText.print(Self.lines(lines.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }))
        case .listRelocatableSchemas:
            GSettingsText.print(Self.lines(source.ids.relocatable))
        case .listKeys:
            GSettingsText.print(Self.lines(schema?.keyNames ?? []))
        case .describe:
            GSettingsText.print(key?.describeText ?? "")
        case .range:
            GSettingsText.print(key?.rangeText ?? "")
        case .listChildren, .listRecursively, .get, .writable:
            try await read()
        case .set, .reset, .resetRecursively:
            return try await write()
        case .monitor:
            try await monitor()
        }
        return 0
    }

    /// `lines`, each ended by a line feed.
    static func lines(_ lines: [String]) -> String {
        lines.map { $0 + "\n" }.joined()
    }
}
