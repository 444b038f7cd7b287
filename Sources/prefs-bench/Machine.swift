import Foundation

/// The machine the figures were taken on, and its load.
enum Machine {
    static var description: String {
        let cpu =
            (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "?" } ?? "?"
        var name = utsname()
        uname(&name)
        let kernel = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let memory = ProcessInfo.processInfo.physicalMemory / (1 << 30)
        return "\(ProcessInfo.processInfo.activeProcessorCount) CPUs (nproc), \(cpu), \(memory) GiB, Linux \(kernel)"
    }

    /// The 1-, 5- and 15-minute load averages.
    static var load: String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "? ? ?"
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }
}
