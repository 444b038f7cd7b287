import CGSettingsBackend

/// A value as prefsd holds it on the bus: one reference to a GVariant of a canonical
/// type (`s x d b ay (d) av a{sv}`, dictionaries sorted by key), the cache's value type
/// in the module. Equal when their serialised bytes are (`g_variant_equal`), as
/// `PropertyListValue` compares byte for byte.
///
/// `@unchecked Sendable`: a GVariant is immutable once built and its reference count is
/// atomic, so a reference may be read and released on any thread.
final class WireValue: Equatable, @unchecked Sendable {
    /// One reference, owned by this object; never floating.
    let variant: OpaquePointer

    /// Takes ownership of `variant` (sinks it when floating).
    init(taking variant: OpaquePointer) {
        self.variant = g_variant_take_ref(variant)
    }

    /// Adds a reference to `variant`.
    init(retaining variant: OpaquePointer) {
        self.variant = g_variant_ref_sink(variant)
    }

    deinit {
        g_variant_unref(variant)
    }

    static func == (left: WireValue, right: WireValue) -> Bool {
        left === right || g_variant_equal(UnsafeRawPointer(left.variant), UnsafeRawPointer(right.variant)) != 0
    }
}
