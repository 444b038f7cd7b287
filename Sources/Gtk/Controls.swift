internal import CGtk

/// A line of text.
public final class Label: Widget {
    /// A label showing `text`, aligned to the start and wrapping when `wraps`.
    public init(_ text: String, wraps: Bool = false) {
        super.init(gtk_label_new(text))
        gtk_label_set_xalign(c(), 0)
        if wraps { gtk_label_set_wrap(c(), 1) }
    }

    /// The text shown.
    public var text: String {
        get { borrowString(gtk_label_get_text(c())) ?? "" }
        set { gtk_label_set_text(c(), newValue) }
    }

    /// Shortens the text with "…" at the end when it does not fit.
    public func ellipsizeAtEnd() {
        gtk_label_set_ellipsize(c(), PANGO_ELLIPSIZE_END)
    }
}

/// A push button.
public final class Button: Widget {
    /// A button with text.
    public init(label: String) {
        super.init(gtk_button_new_with_label(label))
    }

    /// A button with a themed icon; `label` is its accessible name and tooltip.
    public init(iconName: String, label: String) {
        super.init(gtk_button_new_from_icon_name(iconName))
        tooltip = label
        setAccessibleLabel(label)
    }

    /// Calls `handler` when the button is clicked (pointer, Enter or Space).
    public func onClicked(_ handler: @escaping () -> Void) {
        connect("clicked", handler)
    }
}

/// An on/off switch.
public final class Switch: Widget {
    /// A switch, off.
    public init() {
        super.init(gtk_switch_new())
        centerVertically()
    }

    /// On or off.
    public var isOn: Bool {
        get { gtk_switch_get_active(c()) != 0 }
        set { gtk_switch_set_active(c(), newValue ? 1 : 0) }
    }

    /// Calls `handler` when the switch turns on or off (by the user or by `isOn`).
    public func onToggled(_ handler: @escaping () -> Void) {
        connectIgnoringArgument("notify::active", handler)
    }
}

/// A check box, or a radio button once grouped with another.
public final class CheckButton: Widget {
    /// An unchecked check button without a label.
    public init() {
        super.init(gtk_check_button_new())
        centerVertically()
    }

    /// Checked or not.
    public var isChecked: Bool {
        get { gtk_check_button_get_active(c()) != 0 }
        set { gtk_check_button_set_active(c(), newValue ? 1 : 0) }
    }

    /// Makes it a radio button of `leader`'s group: checking one unchecks the others.
    public func joinGroup(of leader: CheckButton) {
        gtk_check_button_set_group(c(), leader.c())
    }

    /// Calls `handler` when it is checked or unchecked.
    public func onToggled(_ handler: @escaping () -> Void) {
        connect("toggled", handler)
    }
}

/// A horizontal slider between two numbers.
public final class Scale: Widget {
    /// A slider from `minimum` to `maximum`, moving in steps of `step`, showing its value.
    public init(minimum: Double, maximum: Double, step: Double) {
        super.init(gtk_scale_new_with_range(GTK_ORIENTATION_HORIZONTAL, minimum, maximum, step))
        gtk_scale_set_draw_value(c(), 1)
        gtk_scale_set_digits(c(), step >= 1 ? 0 : 2)
        gtk_scale_set_value_pos(c(), GTK_POS_RIGHT)
    }

    /// The value.
    public var value: Double {
        get { gtk_range_get_value(c()) }
        set { gtk_range_set_value(c(), newValue) }
    }

    /// Calls `handler` when the value moves (by the user or by `value`).
    public func onValueChanged(_ handler: @escaping () -> Void) {
        connect("value-changed", handler)
    }
}

/// A search field.
public final class SearchEntry: Widget {
    /// An empty search field with a placeholder.
    public init(placeholder: String) {
        super.init(gtk_search_entry_new())
        setProperty("placeholder-text", placeholder)
        setAccessibleLabel(placeholder)
    }

    /// What is typed.
    public var text: String {
        get { borrowString(gtk_editable_get_text(c())) ?? "" }
        set { gtk_editable_set_text(c(), newValue) }
    }

    /// Calls `handler` after the text changes (debounced by GTK).
    public func onSearchChanged(_ handler: @escaping () -> Void) {
        connect("search-changed", handler)
    }
}

/// An icon or picture.
public final class Image: Widget {
    /// A themed icon (`accessories-text-editor`), or an image file when `name` is a path.
    public init(iconOrPath name: String) {
        super.init(name.hasPrefix("/") ? gtk_image_new_from_file(name) : gtk_image_new_from_icon_name(name))
        gtk_image_set_pixel_size(c(), 24)
    }
}

/// A list of strings as a GListModel, for combo rows.
final class StringList: Object {
    init(_ items: [String]) {
        super.init(gtk_string_list_new(nil))
        for item in items { gtk_string_list_append(c(), item) }
    }
}
