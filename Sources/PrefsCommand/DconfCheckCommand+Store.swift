import ArgumentParser
import Dconf
import Foundation
import GSettingsPaths
import GSettingsSchemas
import PreferencesModel
import PreferencesProxy

/// `prefs dconf-check --store`: the values prefsd stores that GSettings would not read,
/// judged against the installed schemas (those GLib reads for this environment).
extension Prefs.DconfCheck {
    /// What GSettings would not read of prefsd's stored values.
    struct StoreFinding {
        /// The domain and key.
        var domain: String
        var key: String
        /// Why, and how to mend it.
        var message: String
    }

    /// Reads every domain a schema describes over prefsd's interface, and dconf's file of
    /// the user database when there is one, and judges each stored value of a schema key:
    /// one the key cannot hold (GSettings reads the default for it on any backend), and one
    /// dconf's file gives with another type than the schema's (GSettings on dconf reads the
    /// default for it). Prints one line for each, then a summary; exit 1 when there is one.
    func checkStore() async throws {
        let schemas = SchemaIndex(directories: SchemaDirectories.glib(environment: ProcessInfo.processInfo.environment))
        let client = try connect()
        defer { client.close() }
        let served = Self.dconfFileValues()
        var findings: [StoreFinding] = []
        var checked = 0
        for domain in try await client.perform(PreferencesCall.domains()).sorted() where schemas.describes(domain) {
            for (key, value) in try await DconfSource.readDomain(domain, with: client).sorted(by: { $0.key < $1.key }) {
                guard let rule = schemas.rule(domain: domain, key: key) else { continue }
                checked += 1
                let path = GSettingsPath(domain: domain, key: key)?.settingsKey ?? ""
                if let refusal = rule.refusal(of: value, key: "\(domain) \"\(key)\"", given: value.description) {
                    findings.append(
                        StoreFinding(
                            domain: domain, key: key,
                            message:
                                "\(refusal): GSettings reads the default for it; `prefs gsettings set \(rule.schema) \(rule.name) VALUE` writes one it reads, `prefs delete \(domain) \(key)` takes it away"
                        ))
                } else if let file = served[path], file.type != rule.type, let suggestion = rule.text(of: value) {
                    findings.append(
                        StoreFinding(
                            domain: domain, key: key,
                            message:
                                "\(domain) \"\(key)\": dconf's file gives it as \(file.text) where the GSettings schema \(rule.schema) gives the key the type \(rule.type), so GSettings on dconf reads the default; `dconf write \(path) '\(suggestion)'` stores it with the key's type"
                        ))
                }
            }
        }
        for finding in findings { Output.line(finding.message) }
        let values = checked == 1 ? "1 stored value" : "\(checked) stored values"
        guard findings.isEmpty else {
            Output.line("GSettings would not read \(findings.count) of \(values) of schema keys")
            throw ExitCode(1)
        }
        Output.line("GSettings reads every one of \(values) of schema keys")
    }

    /// The values dconf's file of the user database holds (prefsd's, when it serves dconf),
    /// by dconf key; none when there is no such regular file or it cannot be read.
    private static func dconfFileValues() -> [String: DconfValue] {
        let path = DconfFiles(name: "user", environment: ProcessInfo.processInfo.environment).databasePath
        guard (try? FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType) == .typeRegular,
            let data = FileManager.default.contents(atPath: path), let read = try? DconfMirror.readableValues(inFile: Array(data))
        else { return [:] }
        return read.values
    }
}
