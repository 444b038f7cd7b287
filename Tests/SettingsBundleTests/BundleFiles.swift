import Foundation

/// A temporary folder tree for bundle tests, removed when the test ends.
final class BundleFiles {
    let root: String

    init() throws {
        root = (NSTemporaryDirectory() as NSString).appendingPathComponent("settings-bundle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// Writes `text` at `relative` under the root, creating folders; returns the full path.
    @discardableResult
    func write(_ relative: String, _ text: String) throws -> String {
        try write(relative, Data(text.utf8))
    }

    @discardableResult
    func write(_ relative: String, _ data: Data) throws -> String {
        let path = (root as NSString).appendingPathComponent(relative)
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Copies the repository's example bundle to `relative`.
    @discardableResult
    func copyExample(to relative: String) throws -> String {
        let path = (root as NSString).appendingPathComponent(relative)
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.exampleBundle, toPath: path)
        return path
    }

    /// The example bundle in the repository.
    static let exampleBundle = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("examples/settings/com.example.Editor").path

    /// An XML plist holding `body` inside its top-level `<dict>`.
    static func plist(_ body: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        \(body)
        </dict>
        </plist>
        """
    }

    /// A specifier dictionary from key/value XML snippets.
    static func entry(_ pairs: [(String, String)]) -> String {
        "<dict>" + pairs.map { "<key>\($0.0)</key>\($0.1)" }.joined() + "</dict>"
    }

    static func string(_ text: String) -> String { "<string>\(text)</string>" }
}
