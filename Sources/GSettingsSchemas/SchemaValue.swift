import CGIO
import GVariantCoding
import GVariantMapping
import PreferencesModel

/// A GVariant of a schema key's type (`uint32 600`), owned: what `gsettings set` would hand
/// GSettings, or what a dconf keyfile holds.
///
/// `@unchecked Sendable`: the one stored property is a GVariant, which is immutable, and
/// whose reference count is atomic.
public final class SchemaValue: @unchecked Sendable {
    /// The GVariant, a reference this object owns (never floating).
    let variant: OpaquePointer

    /// The value of `variant`, a reference (floating or not) this object takes over.
    init(taking variant: OpaquePointer) {
        self.variant = g_variant_take_ref(variant)
    }

    deinit {
        g_variant_unref(variant)
    }

    /// Its GVariant type string (`u`, `as`).
    public var type: String { String(cString: g_variant_get_type_string(variant)) }

    /// GVariant's text of it with the type annotations it needs (`uint32 600`), as
    /// `gsettings get` and `dconf read` print it.
    public var text: String { VariantText.print(variant, annotated: true) }

    /// The value prefsd stores for it: what the GSettings module stores for the same GVariant.
    public var storedValue: PropertyListValue { VariantCoding.propertyList(from: variant) }

    /// Runs `body` with the GVariant, valid during the call.
    public func withVariant<T>(_ body: (OpaquePointer) -> T) -> T {
        body(variant)
    }

    /// The value GVariant text `text` describes, of the type the text itself says (as
    /// `dconf update` and `dconf write` read a value: `60` is an `int32`).
    /// - Throws: ``SchemaError/unparsable(key:type:detail:)`` (type `?`) with GLib's reason.
    public static func parsing(_ text: String, key: String) throws(SchemaError) -> SchemaValue {
        do {
            return SchemaValue(taking: try VariantText.parse(text))
        } catch {
            throw .unparsable(key: key, type: "?", detail: error.detail)
        }
    }
}
