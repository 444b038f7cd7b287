/// The kinds of entries a settings pane is laid out with: the `Type` of a dictionary in a
/// pane's `PreferenceSpecifiers`, spelled as in Apple's settings bundles.
public enum SpecifierType: String, Sendable, Hashable, CaseIterable {
    /// A labeled text field editing a string.
    case textField = "PSTextFieldSpecifier"
    /// A labeled on/off switch.
    case toggleSwitch = "PSToggleSwitchSpecifier"
    /// A slider between `MinimumValue` and `MaximumValue` (a real number).
    case slider = "PSSliderSpecifier"
    /// A list of choices (`Titles` shown, `Values` stored); one is selected.
    case multiValue = "PSMultiValueSpecifier"
    /// A group of radio buttons (`Titles` shown, `Values` stored); one is selected.
    case radioGroup = "PSRadioGroupSpecifier"
    /// A read-only value with a title (`Titles`/`Values` map stored values to text).
    case titleValue = "PSTitleValueSpecifier"
    /// A heading that starts a group of entries (`FooterText` below it).
    case group = "PSGroupSpecifier"
    /// A row opening another pane, read from `File`.plist in the bundle.
    case childPane = "PSChildPaneSpecifier"

    /// Whether an entry of this type edits or shows a key, and so must name one.
    public var needsKey: Bool {
        switch self {
        case .group, .childPane: false
        default: true
        }
    }
}
