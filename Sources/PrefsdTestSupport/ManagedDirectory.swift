import Foundation
import PreferencesModel

extension ServiceFixture {
    /// A managed directory the test owns (it removes it at the end), forcing the values of
    /// `files` (domain → keys), each file renamed into place. prefsd, running as the test's
    /// user, needs `--allow-unowned-managed-dir` to use it unless the test runs as root.
    public static func managedDirectory(_ files: [String: [String: PropertyListValue]] = [:]) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-managed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (domain, values) in files { try place(.dictionary(values), domain: domain, in: directory) }
        return directory
    }
}

/// Writes `value` as `<domain>.plist` in `directory`, renamed into place as configuration
/// management does, so prefsd never reads half a file.
public func place(_ value: PropertyListValue, domain: String, in directory: URL) throws {
    let temporary = directory.appendingPathComponent(".\(domain).tmp")
    try value.xmlPropertyListData().write(to: temporary)
    guard rename(temporary.path, directory.appendingPathComponent("\(domain).plist").path) == 0 else {
        throw FixtureError("cannot rename \(temporary.path): errno \(errno)")
    }
}
