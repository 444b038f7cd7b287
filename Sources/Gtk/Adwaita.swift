internal import CGtk

/// The application: owns the main loop, makes its window on activation.
public final class Application: Object {
    /// An application named `identifier` (`io.github.prefsd.Settings`).
    public init(identifier: String) {
        super.init(adw_application_new(identifier, G_APPLICATION_NON_UNIQUE))
    }

    /// Calls `handler` when the application starts (and is activated again).
    public func onActivate(_ handler: @escaping () -> Void) {
        connect("activate", handler)
    }

    /// Quits (closing the window) on SIGTERM, SIGINT or SIGHUP, which it unblocks in the
    /// calling thread. Call on the main thread before other threads start.
    public func quitOnTerminationSignals() {
        cgtk_quit_on_termination_signals(raw)
    }

    /// Runs the main loop until the last window closes; returns the exit status.
    public func run(arguments: [String]) -> Int32 {
        var pointers = arguments.map { strdup($0) }
        defer { for pointer in pointers { free(pointer) } }
        return pointers.withUnsafeMutableBufferPointer { buffer in
            g_application_run(c(), Int32(buffer.count), buffer.baseAddress)
        }
    }
}

/// The application's main window.
public final class ApplicationWindow: Widget {
    /// A window of `application`, `width` × `height` pixels at first.
    public init(application: Application, title: String, width: Int, height: Int) {
        super.init(adw_application_window_new(application.c()), ownership: .borrowed)
        gtk_window_set_title(c(), title)
        gtk_window_set_default_size(c(), Int32(width), Int32(height))
    }

    /// The window's content.
    public func setContent(_ content: Widget) {
        adw_application_window_set_content(c(), content.c())
    }

    /// Shows the window and brings it to the front.
    public func present() {
        gtk_window_present(c())
    }
}

/// A header bar with a title widget and buttons at its ends.
public final class HeaderBar: Widget {
    /// A header bar; `showsWindowButtons` false leaves out close/minimize (the sidebar's).
    public init(showsWindowButtons: Bool = true) {
        super.init(adw_header_bar_new())
        if !showsWindowButtons {
            adw_header_bar_set_show_end_title_buttons(c(), 0)
            adw_header_bar_set_show_start_title_buttons(c(), 0)
        }
    }

    /// The widget in the middle.
    public func setTitleWidget(_ widget: Widget) {
        adw_header_bar_set_title_widget(c(), widget.c())
    }

    /// Adds a widget at the start.
    public func packStart(_ widget: Widget) {
        adw_header_bar_pack_start(c(), widget.c())
    }

    /// Adds a widget at the end.
    public func packEnd(_ widget: Widget) {
        adw_header_bar_pack_end(c(), widget.c())
    }
}

/// A title and subtitle for a header bar.
public final class WindowTitle: Widget {
    /// A title with an optional subtitle.
    public init(title: String, subtitle: String = "") {
        super.init(adw_window_title_new(title, subtitle))
    }

    /// Changes both lines.
    public func set(title: String, subtitle: String) {
        adw_window_title_set_title(c(), title)
        adw_window_title_set_subtitle(c(), subtitle)
    }
}

/// A page of preference groups, scrolling.
public final class PreferencesPage: Widget {
    /// An empty page.
    public init() {
        super.init(adw_preferences_page_new())
    }

    /// Adds a group at the end.
    public func add(_ group: PreferencesGroup) {
        adw_preferences_page_add(c(), group.c())
    }
}

/// A titled group of rows, in a boxed list.
public final class PreferencesGroup: Widget {
    /// A group with an optional heading and text under it.
    public init(title: String?, description: String? = nil) {
        super.init(adw_preferences_group_new())
        if let title { adw_preferences_group_set_title(c(), title) }
        if let description { adw_preferences_group_set_description(c(), description) }
    }

    /// Adds a row (or any widget) at the end.
    public func add(_ row: Widget) {
        adw_preferences_group_add(c(), row.c())
    }

    /// Removes a row.
    public func remove(_ row: Widget) {
        adw_preferences_group_remove(c(), row.c())
    }
}

/// A row with a title, a subtitle and widgets at its ends.
public class ActionRow: Widget {
    /// A row titled `title`. libadwaita names the row, and the widget it activates, by
    /// the title for screen readers.
    public init(title: String, subtitle: String? = nil) {
        super.init(adw_action_row_new())
        adw_preferences_row_set_title(c(), title)
        adw_preferences_row_set_use_underline(c(), 0)
        if let subtitle { self.subtitle = subtitle }
    }

    fileprivate init(raw pointer: UnsafeMutableRawPointer, title: String) {
        super.init(pointer)
        adw_preferences_row_set_title(c(), title)
    }

    /// Shows the title and subtitle as they are: libadwaita otherwise reads them as Pango
    /// markup, so text with `<` or `&` from outside (a stored value) would not show.
    public func usePlainText() {
        adw_preferences_row_set_use_markup(c(), 0)
    }

    /// The smaller text under the title.
    public var subtitle: String {
        get { borrowString(adw_action_row_get_subtitle(c())) ?? "" }
        set { adw_action_row_set_subtitle(c(), newValue) }
    }

    /// Adds a widget after the title (a switch, a button, a value).
    public func addSuffix(_ widget: Widget) {
        adw_action_row_add_suffix(c(), widget.c())
    }

    /// Adds a widget before the title (an icon, a radio button).
    public func addPrefix(_ widget: Widget) {
        adw_action_row_add_prefix(c(), widget.c())
    }

    /// Makes the whole row activate `widget` when clicked or when Enter/Space is pressed
    /// on it (the row's switch or radio button).
    public func setActivatableWidget(_ widget: Widget) {
        adw_action_row_set_activatable_widget(c(), widget.c())
    }

    /// Makes the row itself activatable (for rows that open a page).
    public func makeActivatable() {
        gtk_list_box_row_set_activatable(c(), 1)
    }

    /// Calls `handler` when the row is activated.
    public func onActivated(_ handler: @escaping () -> Void) {
        connect("activated", handler)
    }
}

/// A row choosing one of several strings from a pop-up list.
public final class ComboRow: ActionRow {
    private let list: StringList

    /// A row titled `title` offering `items`.
    public init(title: String, items: [String]) {
        list = StringList(items)
        super.init(raw: adw_combo_row_new(), title: title)
        adw_combo_row_set_model(c(), list.c())
    }

    /// The index of the chosen item.
    public var selected: Int {
        get { Int(adw_combo_row_get_selected(c())) }
        set { adw_combo_row_set_selected(c(), guint(newValue)) }
    }

    /// Calls `handler` when the chosen item changes.
    public func onSelectionChanged(_ handler: @escaping () -> Void) {
        connectIgnoringArgument("notify::selected", handler)
    }
}

/// A row that is a text field, its title shown as the field's label.
public final class EntryRow: Widget {
    /// A text field titled `title` (libadwaita makes it the accessible name); `secret`
    /// hides what is typed.
    public init(title: String, secret: Bool = false) {
        super.init(secret ? adw_password_entry_row_new() : adw_entry_row_new())
        adw_preferences_row_set_title(c(), title)
    }

    /// The text in the field.
    public var text: String {
        get { borrowString(gtk_editable_get_text(c())) ?? "" }
        set { gtk_editable_set_text(c(), newValue) }
    }

    /// Shows an apply button: changes are confirmed with it or with Enter.
    public func showApplyButton() {
        adw_entry_row_set_show_apply_button(c(), 1)
    }

    /// Adds a widget at the end of the field (a button).
    public func addSuffix(_ widget: Widget) {
        adw_entry_row_add_suffix(c(), widget.c())
    }

    /// Calls `handler` after each change of the text.
    public func onChanged(_ handler: @escaping () -> Void) {
        connect("changed", handler)
    }

    /// Calls `handler` when the change is confirmed (apply button or Enter).
    public func onApply(_ handler: @escaping () -> Void) {
        connect("apply", handler)
    }
}

/// A stack showing one child at a time, by name.
public final class Stack: Widget {
    /// An empty stack that slides between pages.
    public init() {
        super.init(gtk_stack_new())
        gtk_stack_set_transition_type(c(), GTK_STACK_TRANSITION_TYPE_SLIDE_LEFT_RIGHT)
    }

    /// Adds `child` under `name` and shows it.
    public func push(_ child: Widget, name: String) {
        gtk_stack_add_named(c(), child.c(), name)
        gtk_stack_set_visible_child(c(), child.c())
    }

    /// Shows `child` (already added).
    public func show(_ child: Widget) {
        gtk_stack_set_visible_child(c(), child.c())
    }

    /// Removes `child`.
    public func remove(_ child: Widget) {
        gtk_stack_remove(c(), child.c())
    }
}
