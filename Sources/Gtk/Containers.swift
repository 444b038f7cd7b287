internal import CGtk

/// A row or column of widgets.
public final class Box: Widget {
    /// A box laying out children vertically or horizontally, `spacing` pixels apart.
    public init(vertical: Bool, spacing: Int = 0) {
        super.init(gtk_box_new(vertical ? GTK_ORIENTATION_VERTICAL : GTK_ORIENTATION_HORIZONTAL, Int32(spacing)))
    }

    /// Adds `child` at the end.
    public func append(_ child: Widget) {
        gtk_box_append(c(), child.c())
    }

    /// Removes `child`.
    public func remove(_ child: Widget) {
        gtk_box_remove(c(), child.c())
    }
}

/// A scrolling view of one child.
public final class ScrolledWindow: Widget {
    /// An empty scrolled window that scrolls vertically only.
    public init() {
        super.init(gtk_scrolled_window_new())
        gtk_scrolled_window_set_policy(c(), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC)
    }

    /// The scrolled child.
    public func setChild(_ child: Widget?) {
        gtk_scrolled_window_set_child(c(), child?.c())
    }
}

/// A line between parts of a window.
public final class Separator: Widget {
    /// A separator across a horizontal or vertical layout.
    public init(vertical: Bool) {
        super.init(gtk_separator_new(vertical ? GTK_ORIENTATION_VERTICAL : GTK_ORIENTATION_HORIZONTAL))
    }
}

/// A vertical list of rows, one selectable (the sidebar).
public final class ListBox: Widget {
    /// An empty list.
    public init() {
        super.init(gtk_list_box_new())
        gtk_list_box_set_selection_mode(c(), GTK_SELECTION_SINGLE)
    }

    /// Adds a row at the end.
    public func append(_ row: ListBoxRow) {
        gtk_list_box_append(c(), row.c())
    }

    /// Removes a row.
    public func remove(_ row: ListBoxRow) {
        gtk_list_box_remove(c(), row.c())
    }

    /// Selects `row`, or nothing.
    public func select(_ row: ListBoxRow?) {
        if let row { gtk_list_box_select_row(c(), row.c()) } else { gtk_list_box_unselect_all(c()) }
    }

    /// Calls `handler` when the selected row changes (click, keyboard, or ``select(_:)``).
    public func onRowSelected(_ handler: @escaping () -> Void) {
        connectIgnoringArgument("row-selected", handler)
    }
}

/// A row of a ``ListBox``.
public final class ListBoxRow: Widget {
    /// A row showing `child`.
    public init(child: Widget) {
        super.init(gtk_list_box_row_new())
        gtk_list_box_row_set_child(c(), child.c())
    }

    /// Whether this row is the selected one.
    public var isSelected: Bool { gtk_list_box_row_is_selected(c()) != 0 }
}
