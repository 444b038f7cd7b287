import Gtk
import PreferencesModel
import SettingsBundle

/// One widget of a bundle's pane tied to a key: it shows the key's value and writes the
/// user's changes through the controller.
class SettingBinding {
    let domain: String
    let specifier: Specifier
    /// The row to lock when an administrator forces the key.
    let row: Widget
    unowned let controller: SettingsController
    /// True while the binding itself sets the widget, so that is not taken for the user.
    var updating = false

    init(domain: String, specifier: Specifier, row: Widget, controller: SettingsController) {
        self.domain = domain
        self.specifier = specifier
        self.row = row
        self.controller = controller
    }

    var key: String { specifier.key ?? "" }
    var label: String { specifier.title ?? key }

    /// Shows the current value and lock, unless a write of the key is on its way.
    func refresh() {
        let locked = controller.isForced(domain, key)
        row.isSensitive = !locked
        if locked { row.setAccessibleDescription(ErrorMessages.lockedReason) }
        row.tooltip = locked ? ErrorMessages.lockedReason : nil
        showLock(locked)
        guard !controller.isWriting(domain, key) else { return }
        updating = true
        show(controller.effectiveValue(domain, key))
        updating = false
    }

    /// Writes a value the user chose.
    func userChose(_ value: PropertyListValue) {
        guard !updating else { return }
        controller.write(domain, key, value, label: label)
    }

    /// Whether the key holds only the administrator's default (no value of the user's own).
    var readsAdministratorDefault: Bool { controller.readsAdministratorDefault(domain, key) }

    /// Sets the widget to `value`; subclasses override.
    func show(_ value: PropertyListValue?) {}

    /// Shows or hides the lock's text; subclasses with a subtitle override.
    func showLock(_ locked: Bool) {}
}

/// A row's subtitle saying a setting is locked.
/// A row's subtitle saying a setting is locked, or holds only the administrator's default
/// (not a value of the user's own).
private func lockSubtitle(_ row: ActionRow, _ locked: Bool, administrators: Bool, otherwise: String = "") {
    row.subtitle =
        locked
        ? "Locked by your administrator"
        : administrators && otherwise.isEmpty ? ErrorMessages.administratorDefault : otherwise
}

/// `PSToggleSwitchSpecifier`: a row with a switch.
final class ToggleBinding: SettingBinding {
    private let actionRow: ActionRow
    private let toggle = Switch()

    init(domain: String, specifier: Specifier, controller: SettingsController) {
        actionRow = ActionRow(title: specifier.title ?? specifier.key ?? "")
        super.init(domain: domain, specifier: specifier, row: actionRow, controller: controller)
        actionRow.addSuffix(toggle)
        actionRow.setActivatableWidget(toggle)
        toggle.onToggled { [weak self] in
            guard let self else { return }
            self.userChose(self.toggle.isOn ? self.specifier.trueValue : self.specifier.falseValue)
        }
    }

    override func show(_ value: PropertyListValue?) { toggle.isOn = specifier.isOn(value) }
    override func showLock(_ locked: Bool) { lockSubtitle(actionRow, locked, administrators: readsAdministratorDefault) }
}

/// `PSTextFieldSpecifier`: an entry row (a password row when `IsSecure`).
final class TextBinding: SettingBinding {
    private let entry: EntryRow

    init(domain: String, specifier: Specifier, controller: SettingsController) {
        entry = EntryRow(title: specifier.title ?? specifier.key ?? "", secret: specifier.isSecure)
        super.init(domain: domain, specifier: specifier, row: entry, controller: controller)
        entry.onChanged { [weak self] in
            guard let self else { return }
            self.userChose(.string(self.entry.text))
        }
    }

    override func show(_ value: PropertyListValue?) {
        let text = value.map { Coercion.string($0) ?? ValueEditing.text($0) } ?? ""
        // Byte for byte: a stored value respelled in another Unicode normalisation is a
        // new value, and the entry must hold its bytes for the user's next edit.
        if !entry.text.utf8.elementsEqual(text.utf8) { entry.text = text }
    }
}

/// `PSSliderSpecifier`: a row with a slider; integers stay integers when the bundle's
/// default is one.
final class SliderBinding: SettingBinding {
    private let actionRow: ActionRow
    private let scale: Scale
    private let integral: Bool

    init(domain: String, specifier: Specifier, controller: SettingsController) {
        let minimum = specifier.minimumValue ?? 0, maximum = specifier.maximumValue ?? 1
        integral = { if case .integer? = specifier.defaultValue { true } else { false } }()
        actionRow = ActionRow(title: specifier.title ?? specifier.key ?? "")
        scale = Scale(minimum: minimum, maximum: maximum, step: integral ? 1 : (maximum - minimum) / 100)
        super.init(domain: domain, specifier: specifier, row: actionRow, controller: controller)
        scale.expandsHorizontally = true
        scale.setSizeRequest(width: 220, height: -1)
        scale.setAccessibleLabel(label)
        actionRow.addSuffix(scale)
        scale.onValueChanged { [weak self] in
            guard let self else { return }
            let number = self.scale.value
            self.userChose(self.integral ? .integer(Int64(number.rounded())) : .real(number))
        }
    }

    override func show(_ value: PropertyListValue?) {
        let number = SettingsValue.number(value) ?? specifier.minimumValue ?? 0
        if scale.value != number { scale.value = number }
    }

    override func showLock(_ locked: Bool) { lockSubtitle(actionRow, locked, administrators: readsAdministratorDefault) }
}

/// `PSMultiValueSpecifier`: a combo row of the titles, storing the values.
final class ChoiceBinding: SettingBinding {
    private let combo: ComboRow
    private var locked = false
    /// What the subtitle says of a stored value that is none of the choices.
    private var strayValue = ""

    init(domain: String, specifier: Specifier, controller: SettingsController) {
        combo = ComboRow(title: specifier.title ?? specifier.key ?? "", items: specifier.titles)
        super.init(domain: domain, specifier: specifier, row: combo, controller: controller)
        combo.onSelectionChanged { [weak self] in
            guard let self, self.combo.selected < self.specifier.values.count else { return }
            self.userChose(self.specifier.values[self.combo.selected])
        }
    }

    override func show(_ value: PropertyListValue?) {
        if let value, let index = specifier.values.firstIndex(where: { SettingsValue.same($0, value) }) {
            strayValue = ""
            if combo.selected != index { combo.selected = index }
        } else {
            strayValue = value.map { "Stored: \(ValueEditing.text($0))" } ?? ""
        }
        lockSubtitle(combo, locked, administrators: readsAdministratorDefault, otherwise: strayValue)
    }

    override func showLock(_ locked: Bool) {
        self.locked = locked
        lockSubtitle(combo, locked, administrators: readsAdministratorDefault, otherwise: strayValue)
    }
}

/// `PSRadioGroupSpecifier`: a group of rows with radio buttons, one per choice.
final class RadioBinding: SettingBinding {
    private var buttons: [CheckButton] = []
    private var rows: [ActionRow] = []

    init(domain: String, specifier: Specifier, group: PreferencesGroup, controller: SettingsController) {
        super.init(domain: domain, specifier: specifier, row: group, controller: controller)
        for (index, title) in specifier.titles.enumerated() {
            let row = ActionRow(title: title)
            let button = CheckButton()
            if let leader = buttons.first { button.joinGroup(of: leader) }
            row.addPrefix(button)
            row.setActivatableWidget(button)
            group.add(row)
            button.onToggled { [weak self, weak button] in
                guard let self, let button, button.isChecked else { return }
                self.userChose(self.specifier.values[index])
            }
            buttons.append(button)
            rows.append(row)
        }
    }

    override func show(_ value: PropertyListValue?) {
        guard let value, let index = specifier.values.firstIndex(where: { SettingsValue.same($0, value) }) else { return }
        if !buttons[index].isChecked { buttons[index].isChecked = true }
    }
}

/// `PSTitleValueSpecifier`: a row showing the value, read only.
final class TitleValueBinding: SettingBinding {
    private let valueLabel = Label("")

    init(domain: String, specifier: Specifier, controller: SettingsController) {
        let actionRow = ActionRow(title: specifier.title ?? specifier.key ?? "")
        super.init(domain: domain, specifier: specifier, row: actionRow, controller: controller)
        valueLabel.addStyleClass("dim-label")
        actionRow.addSuffix(valueLabel)
    }

    override func show(_ value: PropertyListValue?) {
        valueLabel.text = value.map { specifier.title(for: $0) ?? ValueEditing.text($0) } ?? ""
    }
}
