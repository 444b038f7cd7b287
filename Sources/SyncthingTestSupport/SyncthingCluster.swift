@_exported import BusTestSupport
import Foundation

/// What went wrong starting or driving the Syncthing instances.
public struct SyncthingError: Error, CustomStringConvertible {
    /// What happened.
    public let description: String
    init(_ description: String) { self.description = description }
}

/// N Syncthing instances on this machine sharing one folder, on 127.0.0.1 only: each
/// generated with `--no-default-folder --skip-port-probing` and configured before its first
/// start (global and local discovery, relays, NAT, usage and crash reporting and upgrades
/// off; peers at static tcp://127.0.0.1 addresses; the fs watcher on, 1 s delay).
///
/// `@unchecked Sendable`: a test drives its cluster from one task at a time (it starts the
/// instances, asks them through their REST API, and calls `stop()` last); `instances` is
/// written only by the initializer and by `stop()`, and a `Process` is not `Sendable`.
public final class SyncthingCluster: @unchecked Sendable {
    /// One instance.
    public struct Instance {
        /// Its home (configuration, keys, database); a test puts its machine's files here too.
        public var home: URL
        /// Its copy of the shared folder.
        public var folder: URL
        /// Its REST API, `http://127.0.0.1:PORT`.
        public var api: String
        /// The key of its REST API.
        public var apiKey: String
        /// Its device ID.
        public var deviceID: String
        /// The running `syncthing serve`.
        public var process: Process
    }

    /// The shared folder's ID.
    public static let folderID = "prefsd-roaming"
    /// Where the instances' homes are (removed by `stop()`).
    public let directory: URL
    /// The instances, in the order started.
    public private(set) var instances: [Instance] = []

    /// Whether Syncthing is installed (the tests say so and stop when it is not).
    public static var isInstalled: Bool { (try? findExecutable("syncthing")) != nil }

    /// Starts `count` instances sharing one folder and waits (at most 60 s) until every one
    /// is connected to every other.
    public init(count: Int) async throws {
        directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("prefsd-syncthing-\(UUID().uuidString.prefix(8))")
        let ports = try Self.freePorts(2 * count)
        var ids: [String] = [], keys: [String] = []
        for k in 0..<count {
            let home = directory.appendingPathComponent("st\(k + 1)")
            try FileManager.default.createDirectory(at: home.appendingPathComponent("folder"), withIntermediateDirectories: true)
            let generated = try runCommand(
                "syncthing", ["generate", "--home=\(home.path)", "--no-default-folder", "--skip-port-probing"],
                environment: ["STNODEFAULTFOLDER": "1"], timeout: .seconds(60))
            guard generated.status == 0 else { throw SyncthingError("syncthing generate failed: \(generated.stderr)") }
            let shown = try runCommand("syncthing", ["serve", "--home=\(home.path)", "--device-id"], timeout: .seconds(30))
            guard let id = shown.stdout.split(separator: "\n").map(String.init).last(where: { $0.count == 63 && $0.filter { $0 == "-" }.count == 7 }) else {
                throw SyncthingError("no device ID from syncthing: \(shown.stdout) \(shown.stderr)")
            }
            let config = try String(contentsOf: home.appendingPathComponent("config.xml"), encoding: .utf8)
            guard let start = config.range(of: "<apikey>"), let end = config.range(of: "</apikey>", range: start.upperBound..<config.endIndex) else {
                throw SyncthingError("no API key in the generated config")
            }
            ids.append(id)
            keys.append(String(config[start.upperBound..<end.lowerBound]))
        }
        for k in 0..<count {
            let home = directory.appendingPathComponent("st\(k + 1)")
            var devices = "", folderDevices = ""
            for j in 0..<count {
                let address = j == k ? "dynamic" : "tcp://127.0.0.1:\(ports[2 * j + 1])"
                devices += """
                        <device id="\(ids[j])" name="st\(j + 1)" compression="metadata" introducer="false" skipIntroductionRemovals="false" introducedBy="">
                            <address>\(address)</address>
                            <paused>false</paused>
                            <autoAcceptFolders>false</autoAcceptFolders>
                        </device>

                    """
                folderDevices += "        <device id=\"\(ids[j])\" introducedBy=\"\"><encryptionPassword></encryptionPassword></device>\n"
            }
            let xml = """
                <configuration version="36">
                    <folder id="\(Self.folderID)" label="\(Self.folderID)" path="\(home.appendingPathComponent("folder").path)" type="sendreceive" rescanIntervalS="30" fsWatcherEnabled="true" fsWatcherDelayS="1" ignorePerms="false" autoNormalize="true">
                        <filesystemType>basic</filesystemType>
                \(folderDevices)        <minDiskFree unit="%">0</minDiskFree>
                        <versioning></versioning>
                        <maxConflicts>10</maxConflicts>
                        <markerName>.stfolder</markerName>
                        <paused>false</paused>
                    </folder>
                \(devices)    <gui enabled="true" tls="false" debugging="false">
                        <address>127.0.0.1:\(ports[2 * k])</address>
                        <apikey>\(keys[k])</apikey>
                        <theme>default</theme>
                    </gui>
                    <options>
                        <listenAddress>tcp://127.0.0.1:\(ports[2 * k + 1])</listenAddress>
                        <globalAnnounceServer>default</globalAnnounceServer>
                        <globalAnnounceEnabled>false</globalAnnounceEnabled>
                        <localAnnounceEnabled>false</localAnnounceEnabled>
                        <announceLANAddresses>false</announceLANAddresses>
                        <relaysEnabled>false</relaysEnabled>
                        <natEnabled>false</natEnabled>
                        <startBrowser>false</startBrowser>
                        <urAccepted>-1</urAccepted>
                        <urSeen>3</urSeen>
                        <autoUpgradeIntervalH>0</autoUpgradeIntervalH>
                        <crashReportingEnabled>false</crashReportingEnabled>
                        <reconnectionIntervalS>2</reconnectionIntervalS>
                        <restartOnWakeup>false</restartOnWakeup>
                        <minHomeDiskFree unit="%">0</minHomeDiskFree>
                    </options>
                </configuration>

                """
            try xml.write(to: home.appendingPathComponent("config.xml"), atomically: true, encoding: .utf8)
        }
        // Started one after the other: each answers its REST API (its listener is up) before
        // the next starts and dials it (1.19 stalls when two dial each other at once).
        for k in 0..<count {
            let home = directory.appendingPathComponent("st\(k + 1)")
            let process = Process()
            process.executableURL = URL(fileURLWithPath: try findExecutable("syncthing"))
            process.arguments = ["serve", "--home=\(home.path)", "--no-browser", "--no-restart", "--no-upgrade", "--no-default-folder", "--logflags=3"]
            var environment = helperEnvironment
            environment["STHASHING"] = "minio"
            environment["STMONITORED"] = "yes"
            environment["STNODEFAULTFOLDER"] = "1"
            environment["STNOUPGRADE"] = "1"
            environment["STNORESTART"] = "1"
            process.environment = environment
            let log = home.appendingPathComponent("syncthing.log")
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            let handle = try FileHandle(forWritingTo: log)
            process.standardOutput = handle
            process.standardError = handle
            process.standardInput = FileHandle.nullDevice
            try process.run()
            try? handle.close()
            let instance = Instance(
                home: home, folder: home.appendingPathComponent("folder"), api: "http://127.0.0.1:\(ports[2 * k])",
                apiKey: keys[k], deviceID: ids[k], process: process)
            instances.append(instance)
            guard await eventually(timeout: .seconds(30), { (try? self.get(k, "/rest/system/ping")) != nil }) else {
                throw SyncthingError("syncthing st\(k + 1) did not answer its REST API within 30 s")
            }
        }
        guard await eventually(timeout: .seconds(60), { self.allConnected() }) else {
            throw SyncthingError("the syncthing instances did not connect within 60 s")
        }
    }

    deinit { stop() }

    /// Stops the instances (SIGTERM, then SIGKILL after 10 s) and removes their homes.
    public func stop() {
        for instance in instances where instance.process.isRunning {
            instance.process.terminate()
        }
        for instance in instances {
            let deadline = Date().addingTimeInterval(10)
            while instance.process.isRunning && Date() < deadline { usleep(50_000) }
            if instance.process.isRunning { kill(instance.process.processIdentifier, SIGKILL) }
        }
        instances.removeAll()
        try? FileManager.default.removeItem(at: directory)
    }

    /// A GET (or POST) of the REST API of instance `k`, parsed as JSON.
    @discardableResult
    public func get(_ k: Int, _ path: String, method: String = "GET") throws -> Any? {
        let instance = instances[k]
        let result = try runCommand(
            "curl", ["-fsS", "-m", "10", "-X", method, "-H", "X-API-Key: \(instance.apiKey)", instance.api + path],
            timeout: .seconds(15))
        guard result.status == 0 else { throw SyncthingError("REST \(path) on st\(k + 1): \(result.stderr)") }
        let data = Data(result.stdout.utf8)
        return data.isEmpty ? nil : try JSONSerialization.jsonObject(with: data)
    }

    /// Whether every instance is connected to every other.
    public func allConnected() -> Bool {
        for k in instances.indices {
            guard let root = try? get(k, "/rest/system/connections") as? [String: Any],
                let connections = root["connections"] as? [String: Any]
            else { return false }
            for j in instances.indices where j != k {
                guard let entry = connections[instances[j].deviceID] as? [String: Any], entry["connected"] as? Bool == true else { return false }
            }
        }
        return true
    }

    /// Pauses (or resumes) every peer of instance `k`.
    public func setPaused(_ k: Int, _ paused: Bool) throws {
        try get(k, paused ? "/rest/system/pause" : "/rest/system/resume", method: "POST")
    }

    /// Whether every TCP and UDP socket the instances hold is on 127.0.0.1 (as `ss -tunap`
    /// lists them): the tests never reach any other address.
    public func socketsOnLoopbackOnly() throws -> Bool {
        let result = try runCommand("ss", ["-Htunap"])
        guard result.status == 0 else { throw SyncthingError("ss failed: \(result.stderr)") }
        for instance in instances {
            for line in result.stdout.split(separator: "\n") where line.contains("pid=\(instance.process.processIdentifier),") {
                // Netid State Recv-Q Send-Q Local Peer Process
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count >= 6 else { continue }
                let local = fields[4], peer = fields[5]
                if !local.hasPrefix("127.0.0.1:") { return false }
                if !(peer.hasPrefix("127.0.0.1:") || peer == "0.0.0.0:*" || peer == "*:*") { return false }
            }
        }
        return true
    }

    static func freePorts(_ count: Int) throws -> [Int] {
        let result = try runCommand(
            "python3",
            [
                "-c",
                """
                import socket
                ss = []
                for _ in range(\(count)):
                    s = socket.socket(); s.bind(("127.0.0.1", 0)); ss.append(s)
                print(" ".join(str(s.getsockname()[1]) for s in ss))
                """,
            ])
        let ports = result.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Int($0) }
        guard ports.count == count else { throw SyncthingError("could not find \(count) free ports: \(result.stderr)") }
        return ports
    }
}
