import BusTestSupport
import DBus
import Foundation

/// prefsd on the private bus, with its own store directory.
final class PrefsdInstance {
    let child: Child
    /// Seconds from launch to the first `Read` answered: of `firstRead` when given, else of
    /// an absent key (whose error reply, NotFound, comes from prefsd itself, after it has
    /// loaded its store and taken its name).
    let startup: Double

    /// Launches `executable --address BUS --store STORE` (with `environment`, else this
    /// process's) and waits (at most 60 s) until it answers a `Read`: `firstRead` (which
    /// must answer a value: an error reply from prefsd is thrown), else one of an absent key.
    init(
        executable: String, bus: String, store: URL, log: URL, probe: DBusConnection, arguments: [String] = [],
        environment: [String: String]? = nil, firstRead: DBusMessage? = nil
    ) throws {
        let start = now()
        child = try Child(
            executable, ["--address", bus, "--store", store.path, "--log-level", "warning"] + arguments,
            environment: environment, log: log)
        let read = firstRead ?? Calls.read("bench.coldstart", "absent")
        while true {
            do {
                _ = try probe.callBlocking(read, timeout: .seconds(5))
                break
            } catch let error as DBusError where error.code == .remote && error.name?.hasPrefix("io.github.prefsd.") == true {
                if firstRead != nil {
                    child.stop()
                    throw BenchError("prefsd answered the first Read with \(error)")
                }
                break
            } catch {
                if !child.process.isRunning { throw BenchError("prefsd exited at start; see \(log.path)") }
                if now() - start > 60 { child.stop(); throw BenchError("prefsd did not answer within 60 s") }
                usleep(200)
            }
        }
        startup = now() - start
    }

    func stop() { child.stop(grace: 30) }
}

/// Where the release build's other executables are: next to this one. `swift run prefs-bench`
/// builds only the benchmark, so a missing sibling is built with `swift build` (same
/// configuration) when the working directory is the package.
func siblingExecutable(_ name: String) throws -> String {
    let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    let directory = me.deletingLastPathComponent()
    let candidate = directory.appendingPathComponent(name).path
    if !FileManager.default.isExecutableFile(atPath: candidate),
        FileManager.default.fileExists(atPath: "Package.swift"), let swift = try? findExecutable("swift")
    {
        let configuration = directory.lastPathComponent == "debug" ? "debug" : "release"
        log("building \(name) (swift build -c \(configuration) --product \(name))")
        let build = Process()
        build.executableURL = URL(fileURLWithPath: swift)
        build.arguments = ["build", "-c", configuration, "--product", name]
        try build.run()
        build.waitUntilExit()
    }
    guard FileManager.default.isExecutableFile(atPath: candidate) else {
        throw BenchError("\(candidate) is missing: run `swift build -c release --product \(name)` first (or `make bench`)")
    }
    return candidate
}
