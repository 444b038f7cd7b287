import DBus
import Dconf
import Foundation
import PreferencesProxy

/// The user's files that make prefsd their dconf service (`prefs dconf-switch`), their xfconf
/// service (`prefs xfconf-switch`) or both, and taking them away again (the
/// `switch-back` commands).
///
/// Every file a switch writes starts with ``mark``, so that it knows its own. A file of the
/// user's where a switch writes one (their own `ca.desrt.dconf.service`, or prefsd's
/// service files from `make install`) is kept aside under ``keptSuffix``, a name the bus
/// does not read, and put back on the way back. The user's own systemd unit is never
/// touched: a drop-in (`prefsd.service.d/`) carries what the switch needs. Each protocol's
/// service file and the unit start that protocol's own daemon when prefsd is no longer
/// installed. Every file starts one prefsd with the flag of each protocol switched
/// (`--dconf`, `--xfconf`); which are switched, the protocols' service files holding the
/// mark tell.
struct SwitchSetup {
    /// A protocol prefsd can take over for the user.
    enum Service: String, CaseIterable, Sendable {
        case dconf, xfconf

        /// The bus name of the protocol's service.
        var busName: String {
            switch self {
            case .dconf: DconfBus.busName
            case .xfconf: "org.xfce.Xfconf"
            }
        }

        /// prefsd's flag serving it.
        var flag: String { "--" + rawValue }
    }

    /// The prefsd the files start.
    let prefsd: String
    /// The protocols prefsd serves for the user, in the order of ``Service/allCases``.
    var protocols: [Service]
    /// The session's environment, which says where the user's files are.
    private let environment: [String: String]

    /// The setup starting `prefsd` (default: the `prefsd` beside this `prefs`, else
    /// `/usr/bin/prefsd`) for the protocols whose service files hold the mark.
    init(prefsd: String?, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
        if let prefsd {
            self.prefsd = URL(fileURLWithPath: prefsd).standardizedFileURL.path
        } else {
            let beside = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("prefsd").path
            self.prefsd = FileManager.default.isExecutableFile(atPath: beside) ? beside : "/usr/bin/prefsd"
        }
        // Set first, so that the setup's own paths can be asked for.
        protocols = []
        protocols = Service.allCases.filter { Self.text(of: serviceFile($0.busName))?.hasPrefix(Self.markPrefix) == true }
    }

    /// The setup with `change` switched on (or off).
    func with(_ change: Service, on: Bool) -> SwitchSetup {
        var setup = self
        setup.protocols = Service.allCases.filter { $0 == change ? on : protocols.contains($0) }
        return setup
    }

    /// prefsd's command line, quoted, with the flag of every protocol switched.
    var prefsdCommand: String { (["'\(prefsd)'"] + protocols.map(\.flag)).joined(separator: " ") }

    /// Checks that the files can carry the path of prefsd.
    /// - Throws: ``PrefsError/usage(_:)`` when it holds a character they cannot.
    func checkPath() throws(PrefsError) {
        if let bad = prefsd.unicodeScalars.first(where: { Self.unquotable.contains($0) || $0.properties.generalCategory == .control }) {
            throw .usage("the path \(prefsd) holds \"\(bad.escaped(asASCII: true))\", which a D-Bus service file cannot carry; give --prefsd a path without it")
        }
    }

    /// Characters the quoted command lines of the files cannot carry.
    private static let unquotable: Set<Unicode.Scalar> = ["'", "\"", "\\", "$", "%", "`"]

    /// The user's D-Bus service directory, before the system's (`$XDG_DATA_HOME/dbus-1/services`).
    var servicesDirectory: URL {
        let data = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? ((environment["HOME"] ?? "") + "/.local/share")
        return URL(fileURLWithPath: data).appendingPathComponent("dbus-1/services")
    }

    /// The user's systemd unit directory (`$XDG_CONFIG_HOME/systemd/user`).
    var unitDirectory: URL {
        let config = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? ((environment["HOME"] ?? "") + "/.config")
        return URL(fileURLWithPath: config).appendingPathComponent("systemd/user")
    }

    /// The unit's name, the same as the packaged one, which the user's file overrides.
    static let unitName = "prefsd.service"
    /// What marks the files as a switch's.
    static let mark = "# Written by prefs dconf-switch or xfconf-switch; their switch-back removes it."
    /// How every mark a switch ever wrote begins (prefsd 0.4's said dconf-switch alone).
    static let markPrefix = "# Written by prefs dconf-switch"
    /// What a file of the user's is renamed to while the switch's file is in its place.
    static let keptSuffix = ".before-dconf-switch"
    /// Where the login link points: a relative path, which `systemctl enable` never writes,
    /// so the switch knows its own link.
    static let loginLinkTarget = "../" + unitName

    /// A file the switch writes, and what it holds.
    struct File {
        /// Where it goes.
        let url: URL
        /// What it holds.
        let contents: String
    }

    /// The unit the switch writes when the user has none of their own in ``unitDirectory``.
    var unit: URL { unitDirectory.appendingPathComponent(Self.unitName) }
    /// The drop-in the switch writes into the user's own unit.
    var dropIn: URL { unitDirectory.appendingPathComponent(Self.unitName + ".d/dconf-switch.conf") }
    /// The link that starts the unit at login (what `systemctl --user enable` makes).
    var loginLink: URL { unitDirectory.appendingPathComponent("default.target.wants/\(Self.unitName)") }

    /// The user's service file for the bus name `name`.
    func serviceFile(_ name: String) -> URL { servicesDirectory.appendingPathComponent("\(name).service") }

    /// prefsd's own names, which every switch's files start prefsd for.
    static let prefsdNames = [PreferencesBus.busName, SandboxBus.busName]

    /// Every service file a switch may write.
    var allServiceFiles: [URL] { (Service.allCases.map(\.busName) + Self.prefsdNames).map(serviceFile) }

    /// The files the switch writes, with their contents: none when no protocol is switched.
    var files: [File] {
        guard let first = protocols.first else { return [] }
        let names = protocols.map { ($0.busName, starterCommand($0)) } + Self.prefsdNames.map { ($0, prefsdCommand) }
        let services = names.map { name, exec in
            File(
                url: serviceFile(name),
                contents: """
                    \(Self.mark)
                    [D-BUS Service]
                    Name=\(name)
                    Exec=\(exec)
                    SystemdService=\(Self.unitName)

                    """)
        }
        let starter = starterCommand(first)
        let ownUnit = Self.text(of: unit).map { !$0.hasPrefix(Self.markPrefix) } ?? Self.exists(unit)
        let unitFile =
            ownUnit
            ? File(
                url: dropIn,
                contents: """
                    \(Self.mark)
                    [Service]
                    Type=dbus
                    BusName=\(first.busName)
                    ExecStart=
                    ExecStart=\(starter)

                    """)
            : File(
                url: unit,
                contents: """
                    \(Self.mark)
                    [Unit]
                    Description=prefsd preferences service, serving \(protocols.map { "\($0.rawValue) (\($0.busName))" }.joined(separator: " and ")) too
                    PartOf=graphical-session.target

                    [Service]
                    Type=dbus
                    BusName=\(first.busName)
                    ExecStart=\(starter)
                    Restart=on-failure

                    [Install]
                    WantedBy=default.target

                    """)
        return services + [unitFile]
    }

    /// What starts `service`'s name: prefsd (``prefsdCommand``) while prefsd is installed, else
    /// what the user's session starts for it without the switch (a removed prefsd leaves
    /// the files pointing at dconf-service or xfconfd, not at nothing), or prefsd alone when
    /// no such daemon is known. D-Bus and systemd both split it as a shell would.
    func starterCommand(_ service: Service) -> String {
        guard let fallback = ownDaemon(service) else { return prefsdCommand }
        return "/bin/sh -c \"if [ -x '\(prefsd)' ]; then exec \(prefsdCommand); fi; exec \(fallback)\""
    }

    /// The command line that starts `service`'s own daemon without the switch: that of the
    /// user's own service file (kept aside, or about to be), else the first in the XDG data
    /// directories; `nil` when there is none, or it holds a character the files cannot carry.
    func ownDaemon(_ service: Service) -> String? {
        let own = serviceFile(service.busName)
        let kept = URL(fileURLWithPath: own.path + Self.keptSuffix)
        let data = environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share"
        let system = data.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent("dbus-1/services/\(service.busName).service") }
        for file in [own, kept] + system {
            guard let text = Self.text(of: file), !text.hasPrefix(Self.markPrefix) else { continue }
            let exec = text.split(separator: "\n").first { $0.hasPrefix("Exec=") }.map { $0.dropFirst("Exec=".count).trimmingCharacters(in: .whitespaces) }
            guard let exec, !exec.isEmpty else { continue }
            return exec.unicodeScalars.allSatisfy({ !Self.unquotable.contains($0) && $0.properties.generalCategory != .control }) ? exec : nil
        }
        return nil
    }

    /// Writes the files that differ, keeping aside a file of the user's at their place, and
    /// (with `loginLink`) the login link when there is none; returns what it did, a line each.
    /// - Throws: ``PrefsError/file(path:reason:)`` when a file cannot be written or kept aside.
    func install(loginLink makingLink: Bool = true) throws(PrefsError) -> [String] {
        var done: [String] = []
        for file in files where Self.text(of: file.url) != file.contents {
            try Self.makeDirectory(file.url.deletingLastPathComponent())
            if Self.exists(file.url), Self.text(of: file.url)?.hasPrefix(Self.markPrefix) != true {
                let kept = file.url.path + Self.keptSuffix
                guard rename(file.url.path, kept) == 0 else { throw Self.failure(file.url.path, "could not be kept aside as \(kept)") }
                done.append("kept \(file.url.path) as \(kept)")
            }
            do {
                try file.contents.write(to: file.url, atomically: true, encoding: .utf8)
            } catch {
                throw .file(path: file.url.path, reason: "\(error)")
            }
            done.append("wrote \(file.url.path)")
        }
        if makingLink, !files.isEmpty, !Self.exists(loginLink) {
            try Self.makeDirectory(loginLink.deletingLastPathComponent())
            guard symlink(Self.loginLinkTarget, loginLink.path) == 0 else { throw Self.failure(loginLink.path, "could not be made") }
            done.append("wrote \(loginLink.path)")
        }
        return done
    }

    /// Takes `service` away: removes the files of the switches that no protocol switched
    /// still needs (those holding the mark), the login link with the last of them, and puts
    /// back the user's files it kept aside; rewrites the others for the protocols left.
    /// Returns what it did, a line each.
    func uninstall(_ service: Service) throws(PrefsError) -> [String] {
        let left = with(service, on: false)
        var done = try left.install(loginLink: !left.protocols.isEmpty)
        let kept = Set(left.files.map(\.url))
        if left.protocols.isEmpty, (try? FileManager.default.destinationOfSymbolicLink(atPath: loginLink.path)) == Self.loginLinkTarget {
            guard unlink(loginLink.path) == 0 else { throw Self.failure(loginLink.path, "could not be removed") }
            done.append("removed \(loginLink.path)")
        }
        for url in allServiceFiles + [unit, dropIn] where !kept.contains(url) {
            if Self.text(of: url)?.hasPrefix(Self.markPrefix) == true {
                guard unlink(url.path) == 0 else { throw Self.failure(url.path, "could not be removed") }
                done.append("removed \(url.path)")
            }
            let keptAside = url.path + Self.keptSuffix
            guard Self.exists(URL(fileURLWithPath: keptAside)) else { continue }
            if Self.exists(url) {
                done.append("left \(keptAside) aside: \(url.path) was not written by a switch")
            } else {
                guard rename(keptAside, url.path) == 0 else { throw Self.failure(keptAside, "could not be put back as \(url.path)") }
                done.append("put back \(url.path)")
            }
        }
        // The drop-in's folder, when the switch made it and nothing else is in it.
        rmdir(dropIn.deletingLastPathComponent().path)
        return done
    }

    /// The text of the file at `url`; `nil` when there is none or it cannot be read.
    private static func text(of url: URL) -> String? {
        try? String(contentsOf: url, encoding: .utf8)
    }

    /// Whether anything (a dangling link included) is at `url`.
    private static func exists(_ url: URL) -> Bool {
        var status = stat()
        return lstat(url.path, &status) == 0
    }

    /// Makes the directory at `url` and its missing parents.
    private static func makeDirectory(_ url: URL) throws(PrefsError) {
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            throw .file(path: url.path, reason: "\(error)")
        }
    }

    /// A file error, with the system's reason (`errno`).
    private static func failure(_ path: String, _ what: String) -> PrefsError {
        .file(path: path, reason: "\(what): \(String(cString: strerror(errno)))")
    }
}
