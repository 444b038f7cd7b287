import CGLib

extension DconfChangeset {
    /// The serialised changeset of `changes`, as dconf's engine sends it to `Change`, in
    /// order, as `g_variant_get_data` gives them: each full dconf key (`/org/gnome/desktop/interface/gtk-theme`) with the GVariant to
    /// set it to (borrowed; a floating one is consumed, as GLib's constructors consume it),
    /// or `nil` to reset it. Built by GLib, so the bytes are in GVariant's normal form. An
    /// empty changeset is no bytes.
    public static func serialized(_ changes: [(path: String, value: OpaquePointer?)]) -> [UInt8] {
        let entries: [OpaquePointer?] = changes.map { change in
            g_variant_new_dict_entry(g_variant_new_string(change.path), g_variant_new_maybe(typeV, change.value.map { g_variant_new_variant($0) }))
        }
        let made = entries.withUnsafeBufferPointer { g_variant_new_array(typeEntry, $0.baseAddress, gsize(entries.count)) }
        let changeset = g_variant_take_ref(made)!
        defer { g_variant_unref(changeset) }
        let size = Int(g_variant_get_size(changeset))
        guard size > 0, let data = g_variant_get_data(changeset) else { return [] }
        return Array(UnsafeRawBufferPointer(start: data, count: size))
    }

    /// GLib's `G_VARIANT_TYPE_VARIANT` and the entry type `{smv}`: a GVariantType is its
    /// type string (the macros do not import into Swift).
    private static var typeV: OpaquePointer { OpaquePointer(("v" as StaticString).utf8Start) }
    private static var typeEntry: OpaquePointer { OpaquePointer(("{smv}" as StaticString).utf8Start) }
}
