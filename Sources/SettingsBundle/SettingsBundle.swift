import Foundation
import PreferencesModel

/// An application's settings bundle: the panes that lay out its settings, read from
/// `prefsd/settings/<domain>/` in an XDG data directory.
///
/// A bundle is `Root.plist` (the first pane), the plists of its child panes, and
/// `<lang>.lproj/<table>.strings` files translating the titles. Problems in any file are
/// collected in `problems`, and everything else in the bundle is still used.
public struct SettingsBundle: Sendable, Hashable {
    /// The domain the bundle's settings are written to (the folder's name).
    public var domain: String
    /// The bundle's folder.
    public var directory: String
    /// The application's name to show, localized (`Title` in `Root.plist`).
    public var title: String?
    /// The application's icon (`Icon` in `Root.plist`): an icon-theme name, or the path of
    /// an image file in the bundle.
    public var icon: String?
    /// The first pane.
    public var root: SettingsPane
    /// The child panes reachable from the root, by their `File` name.
    public var childPanes: [String: SettingsPane]
    /// Everything wrong in the bundle, with file and place.
    public var problems: [SettingsBundleError]

    /// The name of the first pane's file.
    public static let rootFileName = "Root"

    /// Reads the bundle in `directory` for `domain`, translated for `languages` (best first,
    /// as `AppleLanguages` spells them). Never fails: problems are in `problems`.
    public static func load(domain: String, directory: String, languages: [String]) -> SettingsBundle {
        var loader = Loader(directory: directory, folders: Localization.folders(for: languages))
        let (top, rootStrings) = loader.file(rootFileName, inherited: StringsTable())
        let root =
            top.map { SettingsPane.parse($0, path: loader.path(of: rootFileName), strings: rootStrings, problems: &loader.problems) }
            ?? SettingsPane(specifiers: [], path: loader.path(of: rootFileName))
        var bundle = SettingsBundle(
            domain: domain, directory: directory, title: root.title, icon: nil, root: root, childPanes: [:], problems: [])
        if let value = top?["Icon"] {
            if case .string(let name) = value, !name.isEmpty {
                bundle.icon =
                    name.contains("/") || name.contains(".")
                    ? (directory as NSString).appendingPathComponent(name) : name
            } else {
                loader.problems.append(
                    .invalidEntry(path: loader.path(of: rootFileName), location: "Icon", reason: "must be an icon name or a file name in the bundle"))
            }
        }
        var pending = root.specifiers.compactMap(\.file)
        while let file = pending.first {
            pending.removeFirst()
            guard bundle.childPanes[file] == nil, file != rootFileName else { continue }
            let path = loader.path(of: file)
            guard FileManager.default.fileExists(atPath: path) else {
                loader.problems.append(.unreadable(path: path, reason: "the child pane's file is missing"))
                bundle.childPanes[file] = SettingsPane(specifiers: [], path: path)
                continue
            }
            let (childTop, strings) = loader.file(file, inherited: rootStrings)
            let pane =
                childTop.map { SettingsPane.parse($0, path: path, strings: strings, problems: &loader.problems) }
                ?? SettingsPane(specifiers: [], path: path)
            bundle.childPanes[file] = pane
            pending += pane.specifiers.compactMap(\.file)
        }
        bundle.problems = loader.problems
        return bundle
    }

    /// A pane by its `File` name (`Root` for the first pane).
    public func pane(named file: String) -> SettingsPane? {
        file == Self.rootFileName ? root : childPanes[file]
    }

    /// Every pane: the root first, then the child panes by name.
    public var panes: [SettingsPane] {
        [root] + childPanes.keys.sorted().compactMap { childPanes[$0] }
    }

    /// The `DefaultValue` of every key of every pane: what the application reads when the
    /// user has set nothing. Where two entries give one key a default, the first (root
    /// pane first) wins.
    public var defaultValues: [String: PropertyListValue] {
        var values: [String: PropertyListValue] = [:]
        for pane in panes {
            for specifier in pane.specifiers {
                if let key = specifier.key, let value = specifier.defaultValue, values[key] == nil { values[key] = value }
            }
        }
        return values
    }
}

/// Reads the bundle's files, collecting problems.
private struct Loader {
    var directory: String
    var folders: [String]
    var problems: [SettingsBundleError] = []

    func path(of file: String) -> String {
        (directory as NSString).appendingPathComponent(file + ".plist")
    }

    /// A pane file's top-level dictionary (`nil` when it is unusable, its problem
    /// recorded) and its strings table.
    mutating func file(_ name: String, inherited: StringsTable) -> ([String: PropertyListValue]?, StringsTable) {
        let path = path(of: name)
        let top = dictionary(at: path)
        let table = SettingsPane.stringsTableName(top ?? [:], fileName: name)
        return (top, strings(table, over: inherited))
    }

    private mutating func dictionary(at path: String) -> [String: PropertyListValue]? {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            problems.append(.unreadable(path: path, reason: Self.reason(error)))
            return nil
        }
        let value: PropertyListValue
        do {
            value = try PropertyListValue(propertyListData: data)
        } catch {
            problems.append(.malformed(path: path, reason: Self.malformedReason(data, error: error)))
            return nil
        }
        guard case .dictionary(let top) = value else {
            problems.append(.malformed(path: path, reason: "holds a \(value.typeName); a pane is a dictionary with PreferenceSpecifiers"))
            return nil
        }
        return top
    }

    /// The table `name` from every language folder that has it, better languages winning.
    private mutating func strings(_ name: String, over inherited: StringsTable) -> StringsTable {
        var merged = inherited
        for folder in folders.reversed() {
            let path = (directory as NSString).appendingPathComponent("\(folder).lproj/\(name).strings")
            guard let data = FileManager.default.contents(atPath: path) else { continue }
            do {
                merged.entries.merge(try StringsTable.parse(data, path: path).entries) { _, better in better }
            } catch {
                problems.append(error)
            }
        }
        return merged
    }

    /// Why the data is not a property list, with the line of the fault when Foundation
    /// names none and the file is XML.
    private static func malformedReason(_ data: Data, error: PreferencesModelError) -> String {
        var reason: String
        if case .invalidValue(let text) = error { reason = text } else { reason = error.description }
        if !reason.contains("line"), let line = XMLCheck.firstUnbalancedLine(data) {
            reason += "; the tags stop matching at line \(line)"
        }
        return reason
    }

    private static func reason(_ error: any Error) -> String {
        let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
        if let underlying, underlying.domain == NSPOSIXErrorDomain, let message = strerror(Int32(underlying.code)) {
            return String(cString: message)
        }
        return error.localizedDescription
    }
}
