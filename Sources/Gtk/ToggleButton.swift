internal import CGtk

/// A button that stays pressed; grouped with others, at most one of the group is pressed
/// (radio behaviour). Screen readers can press it (the button's click action), which a
/// GTK 4.8 check button does not offer.
public final class ToggleButton: Widget {
    /// A toggle button showing `label` (also its accessible name), not pressed.
    public init(label: String) {
        super.init(gtk_toggle_button_new_with_label(label))
    }

    /// Pressed or not.
    public var isActive: Bool {
        get { gtk_toggle_button_get_active(c()) != 0 }
        set { gtk_toggle_button_set_active(c(), newValue ? 1 : 0) }
    }

    /// Joins `leader`'s group: pressing one releases the others.
    public func joinGroup(of leader: ToggleButton) {
        gtk_toggle_button_set_group(c(), leader.c())
    }

    /// Calls `handler` when it is pressed or released (by the user or by ``isActive``).
    public func onToggled(_ handler: @escaping () -> Void) {
        connect("toggled", handler)
    }
}
