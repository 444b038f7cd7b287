import ArgumentParser
import Foundation
import PreferencesModel
import PreferencesProxy

/// Reading and writing property-list files for `import` and `export`.
public enum PropertyListFiles {
    /// The XML property list of a domain, in the shape macOS `defaults export` writes
    /// (XML declaration, DOCTYPE, `<plist version="1.0">`, tab indentation).
    public static func xmlData(_ entries: [String: PropertyListValue]) throws(PrefsError) -> Data {
        do {
            return try PropertyListValue.dictionary(entries).xmlPropertyListData()
        } catch {
            throw .invalid(detail: error.description)
        }
    }

    /// The dictionary in property-list data, XML or binary (detected).
    /// - Throws: ``PrefsError/invalid(detail:)`` when it is not a property list holding a dictionary.
    public static func dictionary(from data: Data, source: String) throws(PrefsError) -> [String: PropertyListValue] {
        let value: PropertyListValue
        do {
            value = try PropertyListValue(propertyListData: data)
        } catch {
            throw .invalid(detail: "\(source) is not an XML or binary property list: \(error.description)")
        }
        guard case .dictionary(let entries) = value else {
            throw .invalid(detail: "\(source) holds a \(value.typeName), not a dictionary of keys and values; a domain is a dictionary")
        }
        return entries
    }

    /// The bytes of `path`, or of standard input for `-`.
    public static func read(_ path: String) throws(PrefsError) -> Data {
        if path == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .file(path: path, reason: reason(error))
        }
    }

    /// Writes `data` to `path` (replacing it atomically), or to standard output for `-`.
    public static func write(_ data: Data, to path: String) throws(PrefsError) {
        if path == "-" {
            Output.write(data)
            return
        }
        do {
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw .file(path: path, reason: reason(error))
        }
    }

    private static func reason(_ error: any Error) -> String {
        let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
        if let underlying, underlying.domain == NSPOSIXErrorDomain, let message = strerror(Int32(underlying.code)) {
            return String(cString: message)
        }
        return error.localizedDescription
    }
}

extension Prefs {
    /// `prefs export DOMAIN PATH|-`.
    public struct Export: AsyncParsableCommand {
        /// The verb's name and help.
        public static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Write a domain as an XML property list to a file or standard output.",
            discussion: """
                The file is what macOS `defaults export` writes and what plistlib, plutil and \
                PropertyListSerialization read, with every value's type kept.

                Examples:
                  prefs export com.example.Editor editor.plist
                  prefs export -g - | less
                """
        )

        /// The domain.
        @Argument(help: "The domain (-g for the global domain).")
        public var domain: String

        /// Where to write, or `-` for standard output.
        @Argument(help: "The file to write, or - for standard output.")
        public var path: String

        /// Creates the verb (ArgumentParser fills in its options).
        public init() {}

        /// Reads the domain and writes the file.
        public func run() async throws {
            let client = try connect()
            defer { client.close() }
            let entries = try await client.perform(PreferencesCall.readDomain(domain), domain: domain)
            try PropertyListFiles.write(try PropertyListFiles.xmlData(entries), to: path)
        }
    }

    /// `prefs import DOMAIN PATH|-`.
    public struct Import: AsyncParsableCommand {
        /// The verb's name and help.
        public static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Replace a domain with the contents of a property-list file.",
            discussion: """
                The file is an XML or binary property list (detected) holding a dictionary, \
                as `defaults export`, plutil or plistlib write it. The domain holds exactly \
                its keys afterwards (one atomic change).

                Examples:
                  prefs import com.example.Editor editor.plist
                  plutil -convert binary1 -o - editor.plist | prefs import com.example.Editor -
                """
        )

        /// The domain.
        @Argument(help: "The domain (-g for the global domain).")
        public var domain: String

        /// Where to read, or `-` for standard input.
        @Argument(help: "The file to read, or - for standard input.")
        public var path: String

        /// Creates the verb (ArgumentParser fills in its options).
        public init() {}

        /// Reads the file and replaces the domain.
        public func run() async throws {
            let entries = try PropertyListFiles.dictionary(
                from: try PropertyListFiles.read(path), source: path == "-" ? "standard input" : path)
            let client = try connect()
            defer { client.close() }
            try await client.perform(PreferencesCall.replaceDomain(domain, entries), domain: domain)
        }
    }
}
