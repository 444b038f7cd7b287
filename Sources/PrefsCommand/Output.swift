import Foundation

/// Where `prefs` writes: straight to the file descriptors (no buffering), so that lines
/// reach a pipe as they are printed and output and messages never interleave oddly.
public enum Output {
    /// Writes `text` and a newline to standard output.
    public static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// Writes raw bytes to standard output.
    public static func write(_ data: Data) {
        FileHandle.standardOutput.write(data)
    }

    /// Writes `prefs: TEXT` and a newline to standard error.
    public static func error(_ text: String) {
        FileHandle.standardError.write(Data("prefs: \(text)\n".utf8))
    }

    /// Writes `text` as is to standard error.
    public static func errorText(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
