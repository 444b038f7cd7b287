import DconfFormats
import Foundation
import GSettingsPaths
import GVariantCoding
import PreferencesModel
import PreferencesProxy

/// The user's dconf values for `prefs dconf-import`, and the way prefsd's values go back for
/// `prefs dconf-export`: the GSettings module's path rule (``GSettingsPath``) and value
/// coding (``GVariantText``), so that both land exactly where and as the module keeps them.
enum DconfSource {
    /// The keyfile `dconf dump PATH` prints (Debian's `dconf-cli`), from the running dconf.
    static func dump(_ path: String) throws(PrefsError) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["dconf", "dump", path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.standardError  // dconf's own message reaches the user
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw .file(path: "dconf dump \(path)", reason: "could not run dconf (install dconf-cli, or pass --from FILE): \(error)")
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw .file(path: "dconf dump \(path)", reason: "dconf exited with status \(process.terminationStatus) (install dconf-cli, or pass --from FILE)")
        }
        return try text(data, source: "dconf dump \(path)")
    }

    /// `data` as text, when it is valid UTF-8; refused otherwise, naming the first line that
    /// is not (a keyfile with such a line is damaged: its values would be imported changed).
    static func text(_ data: Data, source: String) throws(PrefsError) -> String {
        if let text = String(validating: data, as: UTF8.self) { return text }
        let lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        let line = (lines.firstIndex { String(validating: $0, as: UTF8.self) == nil } ?? 0) + 1
        throw .invalid(detail: "\(source): line \(line) is not valid UTF-8; nothing was imported")
    }

    /// The values of `domain`, none when it does not exist.
    static func readDomain(_ domain: String, with client: PrefsClient) async throws(PrefsError) -> [String: PropertyListValue] {
        let result: Result<[String: PropertyListValue], PrefsError>
        do {
            result = .success(try await client.perform(PreferencesCall.readDomain(domain), domain: domain))
        } catch {
            result = .failure(error)
        }
        switch result {
        case .success(let values): return values
        case .failure(.domainNotFound): return [:]
        case .failure(let error): throw error
        }
    }

    /// The values of `entries` by prefsd domain and key, stored as the GSettings module stores
    /// them; every key that cannot be, each with its reason; and the keys left out because
    /// their value is not of the type the installed schema declares (`schemaTypes`, by full
    /// key): GSettings reads the schema default for those under dconf, and would under prefsd.
    static func values(
        of entries: [DconfKeyfile.Entry], schemaTypes: [String: String]
    ) -> (values: [String: [String: PropertyListValue]], problems: [String], ignored: [String]) {
        var values: [String: [String: PropertyListValue]] = [:]
        var problems: [String] = []
        var ignored: [String] = []
        for entry in entries {
            guard let location = GSettingsPath(settingsKey: entry.key) else {
                problems.append(
                    "\(entry.key): its path breaks prefsd's limits on keys (1–1024 bytes of UTF-8 in normal form C), so GSettings under prefsd cannot store it either"
                )
                continue
            }
            do {
                let (value, type) = try GVariantText.storedValue(parsing: entry.text, key: entry.key)
                if let declared = schemaTypes[entry.key], declared != type {
                    ignored.append(
                        "\(entry.key) left out: dconf holds a value of type \(type) where its schema declares \(declared), so GSettings reads the schema default for it"
                    )
                    continue
                }
                values[location.domain, default: [:]][location.key] = value
            } catch {
                problems.append(error.description)
            }
        }
        return (values, problems, ignored)
    }
}
