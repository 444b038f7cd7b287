import BusTestSupport
import Foundation
import GVDB

extension GLibVariant {
    /// The value as GVDB stores it.
    func value() throws -> GVDBValue { try GVDBValue(typeString: typeString, bytes: bytes) }
}

/// A fresh temporary directory, removed by the caller.
func temporaryDirectory() throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dconf-formats-tests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}

/// A dconf "home" of its own: a profile naming `user-db:user`, a config home whose
/// `dconf/user` is the database, and a runtime directory. Reading needs no bus or service;
/// the bus address, when given, is a private bus's (never the session's).
struct DconfHome {
    let directory: URL
    var databaseFile: URL { directory.appendingPathComponent("config/dconf/user") }
    var busAddress = "unix:path=/nonexistent/dconf-formats-tests-no-bus"

    init() throws {
        directory = try temporaryDirectory()
        for sub in ["config/dconf", "run"] {
            try FileManager.default.createDirectory(at: directory.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.appendingPathComponent("run").path)
        try "user-db:user\n".write(to: directory.appendingPathComponent("profile"), atomically: true, encoding: .utf8)
    }

    var environment: [String: String] {
        [
            "DCONF_PROFILE": directory.appendingPathComponent("profile").path,
            "XDG_CONFIG_HOME": directory.appendingPathComponent("config").path,
            "XDG_RUNTIME_DIR": directory.appendingPathComponent("run").path,
            "DBUS_SESSION_BUS_ADDRESS": busAddress,
        ]
    }

    /// Writes `bytes` as the database.
    func install(_ bytes: [UInt8]) throws {
        try Data(bytes).write(to: databaseFile)
    }

    /// The database's bytes.
    func database() throws -> [UInt8] {
        [UInt8](try Data(contentsOf: databaseFile))
    }

    /// Runs `dconf` with `arguments`, its standard input `input` when given; fails unless it
    /// exits 0, and gives its standard output.
    @discardableResult
    func dconf(_ arguments: [String], input: String? = nil) throws -> String {
        var result: (status: Int32, stdout: String, stderr: String)
        if let input {
            let file = directory.appendingPathComponent("stdin-\(UUID().uuidString)")
            try input.write(to: file, atomically: true, encoding: .utf8)
            result = try runCommand("/bin/sh", ["-c", "exec dconf \"$@\" < \"\(file.path)\"", "dconf"] + arguments, environment: environment)
        } else {
            result = try run(arguments)
        }
        guard result.status == 0 else {
            throw BusTestSupportError.processFailed("dconf \(arguments.joined(separator: " ")) exited \(result.status): \(result.stderr)")
        }
        return result.stdout
    }

    /// Runs `dconf` with `arguments`: its exit status and output, whatever they are.
    func run(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try runCommand("dconf", arguments, environment: environment)
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Debian's `dconf-service` on a private bus, activated by the bus with the home's
/// directories, so that `dconf write` and `dconf load` go through the real writer.
final class DconfService {
    let bus: PrivateBus
    var home: DconfHome

    init() throws {
        bus = try PrivateBus()
        home = try DconfHome()
        home.busAddress = bus.address
        let environment = home.environment
        let serviceFile = """
            [D-BUS Service]
            Name=ca.desrt.dconf
            Exec=/usr/bin/env XDG_CONFIG_HOME=\(environment["XDG_CONFIG_HOME"] ?? "") XDG_RUNTIME_DIR=\(environment["XDG_RUNTIME_DIR"] ?? "") /usr/libexec/dconf-service
            """
        try serviceFile.write(to: bus.serviceDirectory.appendingPathComponent("ca.desrt.dconf.service"), atomically: true, encoding: .utf8)
    }

    /// Kills the `dconf-service` the bus started (it outlives its bus otherwise), then the bus.
    func stop() {
        if let pid = bus.processID(owning: "ca.desrt.dconf") { kill(pid, SIGKILL) }
        bus.stop()
        home.remove()
    }
}

/// The values the tests store: one of each shape the brief names, and a few more.
let sampleTexts: [(key: String, type: String, text: String)] = [
    ("/org/gnome/desktop/interface/color-scheme", "s", "'prefer-dark'"),
    ("/org/gnome/desktop/interface/enable-animations", "b", "false"),
    ("/org/gnome/desktop/interface/text-scaling-factor", "d", "1.25"),
    ("/org/gnome/desktop/peripherals/mouse/speed", "i", "-3"),
    ("/org/gnome/shell/favorite-apps", "as", "['org.gnome.Nautilus.desktop', 'firefox-esr.desktop']"),
    ("/org/gnome/shell/disabled-extensions", "as", "@as []"),
    ("/com/example/app/window-size", "(ii)", "(1024, 768)"),
    ("/com/example/app/options", "a{sv}", "{'zoom': <int32 2>, 'theme': <'dark'>, 'recent': <['a', 'b']>}"),
    ("/com/example/app/big", "x", "int64 -9007199254740993"),
    ("/com/example/app/count", "u", "uint32 4000000000"),
    ("/com/example/ünïcode/ключ", "s", "'värde'"),
    ("/top-level", "y", "byte 0x41"),
    ("/com/example/app/maybe", "ms", "@ms nothing"),
]

/// `sampleTexts` with GLib's serialisations.
func sampleValues() throws -> [(key: String, variant: GLibVariant)] {
    let parsed = try GLibVariant.parse(sampleTexts.map { ($0.type, $0.text) })
    return zip(sampleTexts, parsed).map { ($0.key, $1) }
}

/// What `dconf dump /` prints for `values`: a key-file group per directory holding keys
/// (its path without the outer slashes, `/` for the root), visited depth first with a
/// directory's keys before its subdirectories, each sorted by bytes.
func expectedDump(_ values: [String: String]) -> String {
    func listing(_ directory: String) -> [String] {
        var children: Set<String> = []
        for key in values.keys where key.hasPrefix(directory) {
            let rest = key.dropFirst(directory.count)
            if let slash = rest.firstIndex(of: "/") {
                children.insert(String(rest[...slash]))
            } else {
                children.insert(String(rest))
            }
        }
        return children.sorted { a, b in
            if a.hasSuffix("/") != b.hasSuffix("/") { return !a.hasSuffix("/") }
            return a.utf8.lexicographicallyPrecedes(b.utf8)
        }
    }
    var groups: [String] = []
    func visit(_ directory: String) {
        var lines: [String] = []
        for child in listing(directory) {
            if child.hasSuffix("/") {
                continue
            }
            lines.append("\(child)=\(values[directory + child] ?? "")")
        }
        if !lines.isEmpty {
            let group = directory == "/" ? "/" : String(directory.dropFirst().dropLast())
            groups.append("[\(group)]\n" + lines.joined(separator: "\n") + "\n")
        }
        for child in listing(directory) where child.hasSuffix("/") {
            visit(directory + child)
        }
    }
    visit("/")
    return groups.joined(separator: "\n")
}
