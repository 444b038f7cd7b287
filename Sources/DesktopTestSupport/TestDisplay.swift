import BusTestSupport
import Foundation
import PrefsdTestSupport
import Synchronization

/// A desktop for one test's GUI program: an Xvfb display and an accessibility bus of the
/// test's own, so the program's window is driven through AT-SPI (``AccessibilityDriver``)
/// without the machine's display, session or accessibility bus.
public final class TestDisplay: Sendable {
    /// The X display (`:N`) Xvfb serves.
    public let display: String
    private let xvfb: Process
    private let accessibilityBus: PrivateBus

    /// The programs a display needs; a missing one fails the test with this advice.
    public static let tools = ["/usr/bin/Xvfb", "/usr/libexec/at-spi2-registryd", "/usr/bin/python3"]

    /// Starts Xvfb on a free display and a private accessibility bus; throws, saying what to
    /// install, when Xvfb, AT-SPI's registry or pyatspi is missing.
    public init() throws {
        for tool in Self.tools where !FileManager.default.isExecutableFile(atPath: tool) {
            throw FixtureError("\(tool) is missing: run scripts/install-dependencies (xvfb, at-spi2-core, python3-pyatspi)")
        }
        let check = try runCommand("/usr/bin/python3", ["-c", "import pyatspi"])
        guard check.status == 0 else {
            throw FixtureError("python3 cannot import pyatspi (install python3-pyatspi): \(check.stderr)")
        }

        // An accessibility bus of the test's own (AT_SPI_BUS_ADDRESS), starting the AT-SPI
        // registry when a program first registers, as at-spi-bus-launcher's bus does.
        // The registry finds its bus through AT_SPI_BUS_ADDRESS, like the program and the driver.
        accessibilityBus = try PrivateBus()
        let registry = """
            [D-BUS Service]
            Name=org.a11y.atspi.Registry
            Exec=/usr/bin/env AT_SPI_BUS_ADDRESS=\(accessibilityBus.address) /usr/libexec/at-spi2-registryd

            """
        try registry.write(
            to: accessibilityBus.serviceDirectory.appendingPathComponent("org.a11y.atspi.Registry.service"),
            atomically: true, encoding: .utf8)

        // Xvfb picks a free display and writes its number to standard output when ready.
        let process = Process()
        process.environment = helperEnvironment
        process.executableURL = URL(fileURLWithPath: "/usr/bin/Xvfb")
        process.arguments = ["-displayfd", "1", "-nolisten", "tcp", "-screen", "0", "1280x800x24"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        xvfb = process
        let number = Mutex<String?>(nil)
        let ready = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            var text = ""
            while !text.contains("\n") {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
            }
            number.withLock { $0 = text.trimmingCharacters(in: .whitespacesAndNewlines) }
            ready.signal()
        }
        guard ready.wait(timeout: .now() + 30) == .success, let value = number.withLock({ $0 }), !value.isEmpty else {
            kill(process.processIdentifier, SIGKILL)
            accessibilityBus.stop()
            throw FixtureError("Xvfb did not start a display within 30 s")
        }
        display = ":" + value
    }

    deinit {
        // A process started from a test's thread may have SIGTERM blocked: end the display for sure.
        kill(xvfb.processIdentifier, SIGKILL)
        _ = waitForExit(of: xvfb)
        // The registry outlives its bus: end it too.
        if let registry = accessibilityBus.processID(owning: "org.a11y.atspi.Registry") { kill(registry, SIGKILL) }
        accessibilityBus.stop()
    }

    /// What a GTK program and the driver need to use this display and accessibility bus:
    /// X11 (no Wayland), the accessibility bridge on, an English UTF-8 locale (the tests
    /// find widgets by their English names).
    public var environment: [String: String] {
        [
            "DISPLAY": display, "GDK_BACKEND": "x11", "NO_AT_BRIDGE": "0", "AT_SPI_BUS_ADDRESS": accessibilityBus.address,
            "LANG": "C.UTF-8", "LANGUAGE": "",
        ]
    }
}
