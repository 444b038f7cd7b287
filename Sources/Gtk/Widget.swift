internal import CGtk

/// A GTK widget.
open class Widget: Object {
    /// Shown or hidden.
    public var isVisible: Bool {
        get { gtk_widget_get_visible(c()) != 0 }
        set { gtk_widget_set_visible(c(), newValue ? 1 : 0) }
    }

    /// Whether the user can interact with it (insensitive widgets are greyed out and
    /// announced as disabled).
    public var isSensitive: Bool {
        get { gtk_widget_get_sensitive(c()) != 0 }
        set { gtk_widget_set_sensitive(c(), newValue ? 1 : 0) }
    }

    /// Whether it grows to take spare horizontal space.
    public var expandsHorizontally: Bool {
        get { gtk_widget_get_hexpand(c()) != 0 }
        set { gtk_widget_set_hexpand(c(), newValue ? 1 : 0) }
    }

    /// Whether it grows to take spare vertical space.
    public var expandsVertically: Bool {
        get { gtk_widget_get_vexpand(c()) != 0 }
        set { gtk_widget_set_vexpand(c(), newValue ? 1 : 0) }
    }

    /// The text shown when the pointer rests on it.
    public var tooltip: String? {
        get { borrowString(gtk_widget_get_tooltip_text(c())) }
        set { gtk_widget_set_tooltip_text(c(), newValue) }
    }

    /// Sets the name screen readers announce.
    public func setAccessibleLabel(_ label: String) {
        cgtk_accessible_set_label(raw, label)
    }

    /// Sets the description screen readers announce after the name.
    public func setAccessibleDescription(_ text: String) {
        cgtk_accessible_set_description(raw, text)
    }

    /// Adds a style class (`"error"`, `"dim-label"`, `"navigation-sidebar"`, `"flat"` …).
    public func addStyleClass(_ name: String) {
        cgtk_add_css_class(raw, name)
    }

    /// Removes a style class.
    public func removeStyleClass(_ name: String) {
        gtk_widget_remove_css_class(c(), name)
    }

    /// Sets the margin on all four sides.
    public func setMargins(_ margin: Int) {
        gtk_widget_set_margin_top(c(), Int32(margin))
        gtk_widget_set_margin_bottom(c(), Int32(margin))
        gtk_widget_set_margin_start(c(), Int32(margin))
        gtk_widget_set_margin_end(c(), Int32(margin))
    }

    /// The smallest size it asks for (-1: natural).
    public func setSizeRequest(width: Int, height: Int) {
        gtk_widget_set_size_request(c(), Int32(width), Int32(height))
    }

    /// Aligns it to the vertical center of its space.
    public func centerVertically() {
        gtk_widget_set_valign(c(), GTK_ALIGN_CENTER)
    }
}
