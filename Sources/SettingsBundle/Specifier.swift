import PreferencesModel

/// One entry of a settings pane, read from a dictionary of `PreferenceSpecifiers`.
///
/// Titles are already localized with the pane's strings table; `values`, `defaultValue`
/// and `key` are as the bundle wrote them.
public struct Specifier: Sendable, Hashable {
    /// What the entry is.
    public var type: SpecifierType
    /// The preference key it edits or shows (`nil` for groups and child panes).
    public var key: String?
    /// The label, localized (`Title`).
    public var title: String?
    /// The value shown when the domain has none (`DefaultValue`).
    public var defaultValue: PropertyListValue?
    /// The choices' labels, localized (`Titles`), for multi-value, radio-group and title-value entries.
    public var titles: [String]
    /// The values stored for each choice (`Values`), as many as `titles`.
    public var values: [PropertyListValue]
    /// A slider's lower bound (`MinimumValue`).
    public var minimumValue: Double?
    /// A slider's upper bound (`MaximumValue`).
    public var maximumValue: Double?
    /// Text below a group or radio group, localized (`FooterText`).
    public var footerText: String?
    /// A child pane's file name without `.plist` (`File`).
    public var file: String?
    /// Whether a text field hides what is typed (`IsSecure`).
    public var isSecure: Bool
    /// The value a toggle switch stores when on (`TrueValue`; `true` when not given).
    public var trueValue: PropertyListValue
    /// The value a toggle switch stores when off (`FalseValue`; `false` when not given).
    public var falseValue: PropertyListValue
    /// Where the entry was read from: its file and position (`PreferenceSpecifiers[3]`).
    public var location: String

    /// Makes an entry; every field but `type` and `location` is optional.
    public init(
        type: SpecifierType, key: String? = nil, title: String? = nil, defaultValue: PropertyListValue? = nil,
        titles: [String] = [], values: [PropertyListValue] = [], minimumValue: Double? = nil,
        maximumValue: Double? = nil, footerText: String? = nil, file: String? = nil, isSecure: Bool = false,
        trueValue: PropertyListValue = .boolean(true), falseValue: PropertyListValue = .boolean(false),
        location: String
    ) {
        self.type = type
        self.key = key
        self.title = title
        self.defaultValue = defaultValue
        self.titles = titles
        self.values = values
        self.minimumValue = minimumValue
        self.maximumValue = maximumValue
        self.footerText = footerText
        self.file = file
        self.isSecure = isSecure
        self.trueValue = trueValue
        self.falseValue = falseValue
        self.location = location
    }

    /// The title of the choice whose value is `value`, if it is one of `values`.
    public func title(for value: PropertyListValue) -> String? {
        guard let index = values.firstIndex(where: { SettingsValue.same($0, value) }), index < titles.count else { return nil }
        return titles[index]
    }

    /// Whether a toggle switch shows "on" for `value` (its `TrueValue`, or a true boolean
    /// when that is the default).
    public func isOn(_ value: PropertyListValue?) -> Bool {
        guard let value else { return false }
        if SettingsValue.same(value, trueValue) { return true }
        if case .boolean(true) = trueValue { return Coercion.bool(value) ?? false }
        return false
    }
}
