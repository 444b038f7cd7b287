import DBus
import Dconf
import Foundation
import GSettingsPaths
import GSettingsSchemas
import PreferencesModel
import PreferencesProxy

/// Where `prefs gsettings set` and `reset` write so that the session's GSettings programs
/// read it, or why there is no such place.
///
/// - `GSETTINGS_BACKEND=prefsd`: GSettings programs use prefsd's GSettings module; values
///   go to prefsd's interface, as the module writes them.
/// - Otherwise (unset, or `dconf`) they use dconf's backend, which reads dconf's database.
///   prefsd keeps that database when it serves dconf's name (`prefsd --dconf`): values then
///   go through dconf's protocol to prefsd's own dconf writer, so that the database holds
///   them with the schema's GVariant type (prefsd's interface carries none). When another
///   process serves dconf's name (dconf-service), or none does, prefsd's values are read by
///   no GSettings program, and nothing is written.
/// - Another backend (`memory`, `keyfile`): not prefsd's; nothing is written.
enum GSettingsWriter {
    /// prefsd's interface, where its GSettings module reads.
    case preferences
    /// prefsd's dconf writer: the unique name of its connection serving `ca.desrt.dconf`.
    case dconf(String)

    /// The dconf database prefsd serves (`$XDG_CONFIG_HOME/dconf/user`).
    static let database = "user"

    /// Where writes go in this session, or why they would reach no GSettings program (a
    /// sentence ready for the user).
    static func find(
        with client: PrefsClient, environment: [String: String] = ProcessInfo.processInfo.environment
    ) async throws(PrefsError) -> Result<GSettingsWriter, Refusal> {
        let backend = environment["GSETTINGS_BACKEND"] ?? ""
        if backend == "prefsd" { return .success(.preferences) }
        if !backend.isEmpty, backend != "dconf" {
            return .failure(
                Refusal(
                    "GSETTINGS_BACKEND=\(backend): the session's GSettings programs keep their settings in that backend, not in prefsd; set GSETTINGS_BACKEND=prefsd for them (docs/gsettings.md) to use prefsd"
                ))
        }
        let connection = client.proxy.connection
        // prefsd first: asking it starts it (activation) if it is not running yet.
        let prefsd: UInt32
        do {
            _ = try await client.perform(PreferencesCall.version())
            prefsd = try await connection.getConnectionUnixProcessID(PreferencesBus.busName)
        } catch let error as PrefsError {
            throw error
        } catch {
            throw .serviceUnavailable(detail: "the session bus did not say which process is prefsd: \(error)")
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            guard let owner = try await owner(of: DconfBus.busName, on: connection) else {
                // A prefsd given --dconf takes dconf's name just after its own.
                if ProcessHandle(pid: pid_t(prefsd))?.arguments.dropFirst().contains("--dconf") == true, ContinuousClock.now < deadline {
                    try? await Task.sleep(for: .milliseconds(20))
                    continue
                }
                return .failure(
                    Refusal(
                        "nothing serves \(DconfBus.busName) and GSETTINGS_BACKEND is not prefsd, so the session's GSettings programs read dconf's database, which prefsd does not keep: make prefsd dconf's service (`prefs dconf-switch`), or run GSettings programs with GSETTINGS_BACKEND=prefsd"
                    ))
            }
            if owner.pid == prefsd { return .success(.dconf(owner.uniqueName)) }
            let who = ProcessHandle(pid: pid_t(owner.pid)).map { "\($0.commandLine) (pid \($0.pid))" } ?? "process \(owner.pid)"
            return .failure(
                Refusal(
                    "\(who) serves \(DconfBus.busName) and GSETTINGS_BACKEND is not prefsd, so the session's GSettings programs read dconf's database from it, not prefsd: make prefsd dconf's service (`prefs dconf-switch`), or run GSettings programs with GSETTINGS_BACKEND=prefsd"
                ))
        }
    }

    /// The connection owning `name` and its process, or `nil` when none does.
    private static func owner(of name: String, on connection: DBusConnection) async throws(PrefsError) -> (uniqueName: String, pid: UInt32)? {
        do {
            let unique = try await connection.getNameOwner(name)
            return (unique, try await connection.getConnectionUnixProcessID(unique))
        } catch  where error.isRemote(named: StandardErrorName.nameHasNoOwner) {
            return nil
        } catch {
            throw .serviceUnavailable(detail: "the session bus did not say who owns \(name): \(error)")
        }
    }

    /// Why nothing is written: a sentence for the user.
    struct Refusal: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// Makes `changes` in prefsd: each key (its place under the path rule) set to its value,
    /// or reset (`nil`). Through prefsd's interface, one `Apply` per domain; through dconf's,
    /// one `Change`.
    func write(_ changes: [(location: GSettingsPath, value: SchemaValue?)], with client: PrefsClient) async throws(PrefsError) {
        switch self {
        case .preferences:
            var byDomain: [String: (set: [String: PropertyListValue], remove: [String])] = [:]
            for change in changes {
                if let value = change.value {
                    byDomain[change.location.domain, default: ([:], [])].set[change.location.key] = value.storedValue
                } else {
                    byDomain[change.location.domain, default: ([:], [])].remove.append(change.location.key)
                }
            }
            for (domain, batch) in byDomain.sorted(by: { $0.key < $1.key }) {
                _ = try await client.perform(
                    PreferencesCall.apply(domain, set: batch.set, remove: batch.remove), domain: domain, key: changes.first?.location.key)
            }
        case .dconf(let writer):
            let blob = withExtendedLifetime(changes) {
                DconfChangeset.serialized(changes.map { change in (change.location.settingsKey, change.value?.withVariant { $0 }) })
            }
            let call = DBusMessage.methodCall(
                destination: writer, path: DconfBus.writerPath(database: Self.database), interface: DconfBus.writerInterface,
                member: DconfBus.changeMethod, body: [.bytes(blob)])
            do {
                _ = try await client.proxy.connection.call(call)
            } catch {
                let location = changes.first?.location
                throw PrefsClient.map(PreferencesProxyError(error), domain: location?.domain, key: location?.key)
            }
        }
    }
}
