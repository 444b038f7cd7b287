import DBus
import Dconf
import Foundation
import PreferencesProxy

/// The user's files that make prefsd their dconf service (`prefs dconf-switch`), and taking
/// them away again (`prefs dconf-switch-back`).
///
/// Every file the switch writes starts with ``mark``, so that it knows its own. A file of the
/// user's where the switch writes one (their own `ca.desrt.dconf.service`, or prefsd's
/// service files from `make install`) is kept aside under ``keptSuffix``, a name the bus
/// does not read, and put back on the way back. The user's own systemd unit is never
/// touched: a drop-in (`prefsd.service.d/`) carries what the switch needs. dconf's service
/// file and the unit start dconf's own service when prefsd is no longer installed.
struct DconfSetup {
    /// The prefsd the files start.
    let prefsd: String
    /// The session's environment, which says where the user's files are.
    private let environment: [String: String]

    /// The setup starting `prefsd` (default: the `prefsd` beside this `prefs`, else
    /// `/usr/bin/prefsd`).
    init(prefsd: String?, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
        if let prefsd {
            self.prefsd = URL(fileURLWithPath: prefsd).standardizedFileURL.path
        } else {
            let beside = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("prefsd").path
            self.prefsd = FileManager.default.isExecutableFile(atPath: beside) ? beside : "/usr/bin/prefsd"
        }
    }

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
    /// What marks the files as dconf-switch's.
    static let mark = "# Written by prefs dconf-switch; prefs dconf-switch-back removes it."
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

    /// The files the switch writes, with their contents.
    var files: [File] {
        let starter = starterCommand
        let services = [DconfBus.busName, PreferencesBus.busName, SandboxBus.busName].map { name in
            File(
                url: servicesDirectory.appendingPathComponent("\(name).service"),
                contents: """
                    \(Self.mark)
                    [D-BUS Service]
                    Name=\(name)
                    Exec=\(name == DconfBus.busName ? starter : "'\(prefsd)' --dconf")
                    SystemdService=\(Self.unitName)

                    """)
        }
        let ownUnit = Self.text(of: unit).map { !$0.hasPrefix(Self.mark) } ?? Self.exists(unit)
        let unitFile =
            ownUnit
            ? File(
                url: dropIn,
                contents: """
                    \(Self.mark)
                    [Service]
                    Type=dbus
                    BusName=\(DconfBus.busName)
                    ExecStart=
                    ExecStart=\(starter)

                    """)
            : File(
                url: unit,
                contents: """
                    \(Self.mark)
                    [Unit]
                    Description=prefsd preferences service, serving dconf too (ca.desrt.dconf)
                    PartOf=graphical-session.target

                    [Service]
                    Type=dbus
                    BusName=\(DconfBus.busName)
                    ExecStart=\(starter)
                    Restart=on-failure

                    [Install]
                    WantedBy=default.target

                    """)
        return services + [unitFile]
    }

    /// What starts dconf's service: `prefsd --dconf` while prefsd is installed, else what the
    /// user's session starts for dconf without the switch (a removed prefsd leaves the
    /// files pointing at dconf-service, not at nothing), or prefsd alone when no
    /// dconf-service is known. D-Bus and systemd both split it as a shell would.
    var starterCommand: String {
        guard let fallback = dconfService else { return "'\(prefsd)' --dconf" }
        return "/bin/sh -c \"if [ -x '\(prefsd)' ]; then exec '\(prefsd)' --dconf; fi; exec \(fallback)\""
    }

    /// The command line that starts dconf-service without the switch: that of the user's own
    /// `ca.desrt.dconf.service` (kept aside, or about to be), else the first in the XDG data
    /// directories; `nil` when there is none, or it holds a character the files cannot carry.
    var dconfService: String? {
        let own = servicesDirectory.appendingPathComponent(DconfBus.busName + ".service")
        let kept = URL(fileURLWithPath: own.path + Self.keptSuffix)
        let data = environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share"
        let system = data.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent("dbus-1/services/\(DconfBus.busName).service") }
        for file in [own, kept] + system {
            guard let text = Self.text(of: file), !text.hasPrefix(Self.mark) else { continue }
            let exec = text.split(separator: "\n").first { $0.hasPrefix("Exec=") }.map { $0.dropFirst("Exec=".count).trimmingCharacters(in: .whitespaces) }
            guard let exec, !exec.isEmpty else { continue }
            return exec.unicodeScalars.allSatisfy({ !Self.unquotable.contains($0) && $0.properties.generalCategory != .control }) ? exec : nil
        }
        return nil
    }

    /// Writes the files that differ, keeping aside a file of the user's at their place, and
    /// the login link when there is none; returns what it did, a line each.
    /// - Throws: ``PrefsError/file(path:reason:)`` when a file cannot be written or kept aside.
    func install() throws(PrefsError) -> [String] {
        var done: [String] = []
        for file in files where Self.text(of: file.url) != file.contents {
            try Self.makeDirectory(file.url.deletingLastPathComponent())
            if Self.exists(file.url), Self.text(of: file.url)?.hasPrefix(Self.mark) != true {
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
        if !Self.exists(loginLink) {
            try Self.makeDirectory(loginLink.deletingLastPathComponent())
            guard symlink(Self.loginLinkTarget, loginLink.path) == 0 else { throw Self.failure(loginLink.path, "could not be made") }
            done.append("wrote \(loginLink.path)")
        }
        return done
    }

    /// Removes the files the switch wrote (those holding its mark) and its login link, and
    /// puts back the user's files it kept aside; returns what it did, a line each.
    func uninstall() throws(PrefsError) -> [String] {
        var done: [String] = []
        if (try? FileManager.default.destinationOfSymbolicLink(atPath: loginLink.path)) == Self.loginLinkTarget {
            guard unlink(loginLink.path) == 0 else { throw Self.failure(loginLink.path, "could not be removed") }
            done.append("removed \(loginLink.path)")
        }
        let urls = [DconfBus.busName, PreferencesBus.busName, SandboxBus.busName].map { servicesDirectory.appendingPathComponent("\($0).service") }
        for url in urls + [unit, dropIn] {
            if Self.text(of: url)?.hasPrefix(Self.mark) == true {
                guard unlink(url.path) == 0 else { throw Self.failure(url.path, "could not be removed") }
                done.append("removed \(url.path)")
            }
            let kept = url.path + Self.keptSuffix
            guard Self.exists(URL(fileURLWithPath: kept)) else { continue }
            if Self.exists(url) {
                done.append("left \(kept) aside: \(url.path) was not written by dconf-switch")
            } else {
                guard rename(kept, url.path) == 0 else { throw Self.failure(kept, "could not be put back as \(url.path)") }
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
