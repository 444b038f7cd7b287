internal import CDBus

#if canImport(Glibc)
    import Glibc
#endif

/// A libdbus `DBusError` on the heap, freed on deinit. Used only inside one function call.
final class CErrorBox {
    /// The C error, initialised and owned by this box.
    let pointer: UnsafeMutablePointer<CDBus.DBusError>

    init() {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: CDBus.DBusError())
        dbus_error_init(pointer)
    }

    deinit {
        dbus_error_free(pointer)
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }

    /// Whether libdbus set the error.
    var isSet: Bool { dbus_error_is_set(pointer) != 0 }

    /// The error's name, or an empty string.
    var name: String { pointer.pointee.name.map { String(cString: $0) } ?? "" }

    /// The error's message, or an empty string.
    var message: String { pointer.pointee.message.map { String(cString: $0) } ?? "" }
}

/// Runs one of libdbus's `dbus_validate_*`-style functions on `string` and returns the reason it
/// was refused, or nil when valid. A Swift string with a NUL is refused before reaching C
/// (`withCString` would silently cut it).
///
/// A valid string costs one call with no error to fill in (libdbus accepts a NULL
/// `DBusError`); only a refused one is checked again to get the reason.
func validationFailure(
    _ string: String,
    _ validate: (UnsafePointer<CChar>, UnsafeMutablePointer<CDBus.DBusError>?) -> dbus_bool_t
) -> String? {
    if containsNUL(string) { return "it contains a NUL character" }
    if string.withCString({ validate($0, nil) }) != 0 { return nil }
    let error = CErrorBox()
    _ = string.withCString { validate($0, error.pointer) }
    return error.isSet ? error.message : "libdbus refused it"
}

/// Whether `string` holds a NUL byte (`memchr` over its UTF-8; `utf8.contains(0)` walks it
/// byte by byte through the generic Sequence path).
func containsNUL(_ string: String) -> Bool {
    var string = string
    return string.withUTF8 { bytes in
        guard let base = bytes.baseAddress else { return false }
        return memchr(base, 0, bytes.count) != nil
    }
}
