internal import CGtk

/// A multi-line text field (a GtkTextView over its buffer), in a monospace font, for text
/// that reads as lines (a list, one item per line).
public final class TextView: Widget {
    /// An empty, editable, monospace text field.
    public init() {
        super.init(gtk_text_view_new())
        gtk_text_view_set_monospace(c(), 1)
        gtk_text_view_set_wrap_mode(c(), GTK_WRAP_WORD_CHAR)
        gtk_text_view_set_top_margin(c(), 6)
        gtk_text_view_set_bottom_margin(c(), 6)
        gtk_text_view_set_left_margin(c(), 6)
        gtk_text_view_set_right_margin(c(), 6)
    }

    /// The text in the field.
    public var text: String {
        get {
            guard let buffer = gtk_text_view_get_buffer(c()) else { return "" }
            var start = GtkTextIter(), end = GtkTextIter()
            gtk_text_buffer_get_bounds(buffer, &start, &end)
            return takeString(gtk_text_buffer_get_text(buffer, &start, &end, 0)) ?? ""
        }
        set {
            guard let buffer = gtk_text_view_get_buffer(c()) else { return }
            gtk_text_buffer_set_text(buffer, newValue, -1)
        }
    }

    /// Whether the user can change the text.
    public var isEditable: Bool {
        get { gtk_text_view_get_editable(c()) != 0 }
        set { gtk_text_view_set_editable(c(), newValue ? 1 : 0) }
    }
}
