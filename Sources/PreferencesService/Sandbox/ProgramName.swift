import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The name of the program a process runs, as the change journal records who made a change.
enum ProgramName {
    /// The file name of `/proc/PID/exe` (the program's full name), else `/proc/PID/comm`
    /// (cut to 15 bytes by the kernel), else `nil`. May block like any read of `/proc`:
    /// run it where the caller's root is read (``CallerGate``).
    static func of(processID pid: UInt32, procRoot: String = "/proc") -> String? {
        if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(procRoot)/\(pid)/exe") {
            // A program replaced while running reads "name (deleted)".
            let name = (target as NSString).lastPathComponent.replacingOccurrences(of: " (deleted)", with: "")
            if !name.isEmpty { return name }
        }
        guard let data = FileManager.default.contents(atPath: "\(procRoot)/\(pid)/comm") else { return nil }
        let name = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return name.isEmpty ? nil : name
    }
}
