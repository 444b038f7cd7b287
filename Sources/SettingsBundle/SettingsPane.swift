import PreferencesModel

/// One pane of a settings bundle: `Root.plist` or a child pane's plist.
public struct SettingsPane: Sendable, Hashable {
    /// The pane's title, localized (`Title` at the top of the plist).
    public var title: String?
    /// The entries, in the order they are shown; entries with problems are left out.
    public var specifiers: [Specifier]
    /// The file the pane was read from.
    public var path: String

    /// A pane with these entries.
    public init(title: String? = nil, specifiers: [Specifier], path: String) {
        self.title = title
        self.specifiers = specifiers
        self.path = path
    }

    /// The pane's name for its strings table: `StringsTable`, else the file's name
    /// (`Root` for `Root.plist`).
    static func stringsTableName(_ top: [String: PropertyListValue], fileName: String) -> String {
        if case .string(let name)? = top["StringsTable"], !name.isEmpty { return name }
        return fileName
    }

    /// Reads a pane from the top-level dictionary of its plist, collecting problems.
    static func parse(
        _ top: [String: PropertyListValue], path: String, strings: StringsTable, problems: inout [SettingsBundleError]
    ) -> SettingsPane {
        var title: String?
        if let value = top["Title"] {
            if case .string(let text) = value {
                title = strings.localized(text)
            } else {
                problems.append(.invalidEntry(path: path, location: "Title", reason: "must be a string, not a \(value.typeName)"))
            }
        }
        guard let list = top["PreferenceSpecifiers"] else {
            problems.append(
                .invalidEntry(
                    path: path, location: "PreferenceSpecifiers", reason: "is missing: a pane lists its entries in an array named PreferenceSpecifiers"))
            return SettingsPane(title: title, specifiers: [], path: path)
        }
        guard case .array(let items) = list else {
            problems.append(.invalidEntry(path: path, location: "PreferenceSpecifiers", reason: "must be an array of dictionaries, not a \(list.typeName)"))
            return SettingsPane(title: title, specifiers: [], path: path)
        }
        var specifiers: [Specifier] = []
        for (index, item) in items.enumerated() {
            var location = "PreferenceSpecifiers[\(index)]"
            guard case .dictionary(let entry) = item else {
                problems.append(.invalidEntry(path: path, location: location, reason: "must be a dictionary, not a \(item.typeName)"))
                continue
            }
            if case .string(let key)? = entry["Key"] { location += " (Key \"\(key)\")" }
            do {
                specifiers.append(try SpecifierReader(entry: entry, location: location, strings: strings).read())
            } catch let reason {
                problems.append(.invalidEntry(path: path, location: location, reason: reason.text))
            }
        }
        return SettingsPane(title: title, specifiers: specifiers, path: path)
    }
}

/// Why one entry was left out (the text of a `SettingsBundleError.invalidEntry`).
struct EntryProblem: Error {
    var text: String
}

/// Reads one dictionary of `PreferenceSpecifiers` into a `Specifier`.
struct SpecifierReader {
    var entry: [String: PropertyListValue]
    var location: String
    var strings: StringsTable

    func read() throws(EntryProblem) -> Specifier {
        guard let typeValue = entry["Type"] else {
            throw EntryProblem(text: "has no Type; give one of \(Self.knownTypes)")
        }
        guard case .string(let typeName) = typeValue else {
            throw EntryProblem(text: "Type must be a string, not a \(typeValue.typeName)")
        }
        guard let type = SpecifierType(rawValue: typeName) else {
            throw EntryProblem(text: "unknown Type \"\(typeName)\"; the known types are \(Self.knownTypes)")
        }
        var specifier = Specifier(type: type, location: location)
        specifier.title = try string("Title").map(strings.localized)
        specifier.footerText = try string("FooterText").map(strings.localized)
        specifier.defaultValue = entry["DefaultValue"]
        if let key = try string("Key") {
            if let problem = PreferenceKey.problem(with: key) { throw EntryProblem(text: "Key is not a valid key: \(problem)") }
            specifier.key = key
        } else if type.needsKey {
            throw EntryProblem(text: "\(typeName) needs a Key: the preference it edits")
        }
        switch type {
        case .textField:
            specifier.isSecure = try boolean("IsSecure") ?? false
            if let value = specifier.defaultValue, case .string = value {
            } else if let value = specifier.defaultValue {
                throw EntryProblem(text: "DefaultValue of a text field must be a string, not a \(value.typeName)")
            }
        case .toggleSwitch:
            specifier.trueValue = entry["TrueValue"] ?? .boolean(true)
            specifier.falseValue = entry["FalseValue"] ?? .boolean(false)
            if let value = specifier.defaultValue,
                !SettingsValue.same(value, specifier.trueValue), !SettingsValue.same(value, specifier.falseValue)
            {
                throw EntryProblem(text: "DefaultValue must be the TrueValue or the FalseValue (true or false when they are not given)")
            }
        case .slider:
            guard let minimum = try number("MinimumValue"), let maximum = try number("MaximumValue") else {
                throw EntryProblem(text: "a slider needs MinimumValue and MaximumValue (numbers)")
            }
            guard minimum < maximum else { throw EntryProblem(text: "MinimumValue \(minimum) must be below MaximumValue \(maximum)") }
            specifier.minimumValue = minimum
            specifier.maximumValue = maximum
            if let value = specifier.defaultValue {
                guard let number = SettingsValue.number(value), number >= minimum, number <= maximum else {
                    throw EntryProblem(text: "DefaultValue must be a number from \(minimum) to \(maximum)")
                }
            }
        case .multiValue, .radioGroup, .titleValue:
            try readChoices(into: &specifier, required: type != .titleValue)
        case .childPane:
            guard let file = try string("File"), !file.isEmpty else {
                throw EntryProblem(text: "a child pane needs File: the name of its plist in the bundle, without .plist")
            }
            guard !file.contains("/"), !file.hasPrefix(".") else {
                throw EntryProblem(text: "File \"\(file)\" must name a plist inside the bundle, without / or a leading dot")
            }
            specifier.file = file
        case .group:
            break
        }
        return specifier
    }

    private func readChoices(into specifier: inout Specifier, required: Bool) throws(EntryProblem) {
        let titles = entry["Titles"], values = entry["Values"]
        if titles == nil, values == nil, !required { return }
        guard case .array(let titleItems)? = titles, case .array(let valueItems)? = values else {
            throw EntryProblem(text: "needs Titles and Values: two arrays of the same length (the labels shown and the values stored)")
        }
        guard titleItems.count == valueItems.count else {
            throw EntryProblem(text: "Titles has \(titleItems.count) items but Values has \(valueItems.count); they pair up one to one")
        }
        guard !valueItems.isEmpty || !required else { throw EntryProblem(text: "Titles and Values are empty: give at least one choice") }
        var labels: [String] = []
        for (index, item) in titleItems.enumerated() {
            guard case .string(let text) = item else { throw EntryProblem(text: "Titles[\(index)] must be a string, not a \(item.typeName)") }
            labels.append(strings.localized(text))
        }
        specifier.titles = labels
        specifier.values = valueItems
        if required, let value = specifier.defaultValue, !valueItems.contains(where: { SettingsValue.same($0, value) }) {
            throw EntryProblem(text: "DefaultValue is not one of Values")
        }
    }

    private func string(_ name: String) throws(EntryProblem) -> String? {
        guard let value = entry[name] else { return nil }
        guard case .string(let text) = value else { throw EntryProblem(text: "\(name) must be a string, not a \(value.typeName)") }
        return text
    }

    private func boolean(_ name: String) throws(EntryProblem) -> Bool? {
        guard let value = entry[name] else { return nil }
        guard case .boolean(let flag) = value else { throw EntryProblem(text: "\(name) must be a boolean, not a \(value.typeName)") }
        return flag
    }

    private func number(_ name: String) throws(EntryProblem) -> Double? {
        guard let value = entry[name] else { return nil }
        guard let number = SettingsValue.number(value) else { throw EntryProblem(text: "\(name) must be a number, not a \(value.typeName)") }
        return number
    }

    static let knownTypes = SpecifierType.allCases.map(\.rawValue).joined(separator: ", ")
}
