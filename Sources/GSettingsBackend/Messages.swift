import CGSettingsBackend

/// The D-Bus messages the backend sends and reads, as GDBus messages: bodies built and
/// taken apart with GVariant (GDBus's own value type), no other D-Bus code in the process.
enum Messages {
    /// A method call of prefsd's object; `noReply`: the answer is not wanted.
    static func call(_ names: BusNames, interface: String = PreferencesBus.interface, _ member: String, _ arguments: [OpaquePointer?]) -> OpaquePointer {
        let message = g_dbus_message_new_method_call(names.busName, PreferencesBus.objectPath, interface, member)!
        g_dbus_message_set_body(message, tuple(arguments))
        return message
    }

    /// A call of the bus driver whose answer is not wanted (`AddMatch`).
    static func busCall(_ member: String, _ argument: String) -> OpaquePointer {
        let message = g_dbus_message_new_method_call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", member)!
        g_dbus_message_set_body(message, tuple([g_variant_new_string(argument)]))
        g_dbus_message_set_flags(message, G_DBUS_MESSAGE_FLAGS_NO_REPLY_EXPECTED)
        return message
    }

    static func tuple(_ children: [OpaquePointer?]) -> OpaquePointer {
        children.withUnsafeBufferPointer { g_variant_new_tuple($0.baseAddress, gsize(children.count)) }
    }

    /// An `as` of `strings`.
    static func strings(_ strings: [String]) -> OpaquePointer {
        let type = g_variant_type_new("s")
        defer { g_variant_type_free(type) }
        let items: [OpaquePointer?] = strings.map { g_variant_new_string($0) }
        return items.withUnsafeBufferPointer { g_variant_new_array(type, $0.baseAddress, gsize(items.count)) }
    }

    /// An `a{sv}` of `values` (sorted by key, as prefsd sends a dictionary).
    static func dictionary(_ values: [String: WireValue]) -> OpaquePointer {
        let type = g_variant_type_new("{sv}")
        defer { g_variant_type_free(type) }
        let entries: [OpaquePointer?] = values.sorted { $0.key < $1.key }.map { entry in
            g_variant_new_dict_entry(g_variant_new_string(entry.key), g_variant_new_variant(entry.value.variant))
        }
        return entries.withUnsafeBufferPointer { g_variant_new_array(type, $0.baseAddress, gsize(entries.count)) }
    }

    // MARK: Reading

    /// Child `index` of the message's body (a new reference), if the body has it.
    static func argument(_ message: OpaquePointer, _ index: Int) -> OpaquePointer? {
        guard let body = g_dbus_message_get_body(message), g_variant_is_container(body) != 0,
            Int(g_variant_n_children(body)) > index
        else { return nil }
        return g_variant_get_child_value(body, gsize(index))
    }

    /// The string argument `index`, if it is one.
    static func string(_ message: OpaquePointer, _ index: Int) -> String? {
        guard let value = argument(message, index) else { return nil }
        defer { g_variant_unref(value) }
        guard g_variant_is_of_type(value, gvariantType("s")) != 0 else { return nil }
        return String(cString: g_variant_get_string(value, nil))
    }

    /// The `as` argument `index` (empty when it is not one).
    static func stringList(_ message: OpaquePointer, _ index: Int) -> [String] {
        guard let value = argument(message, index) else { return [] }
        defer { g_variant_unref(value) }
        guard g_variant_is_of_type(value, gvariantType("as")) != 0 else { return [] }
        let count = Int(g_variant_n_children(value))
        var strings: [String] = []
        strings.reserveCapacity(count)
        for index in 0..<count {
            let item = g_variant_get_child_value(value, gsize(index))!
            strings.append(String(cString: g_variant_get_string(item, nil)))
            g_variant_unref(item)
        }
        return strings
    }

    /// The `a{sv}` argument `index` as wire values (each unwrapped of its variant).
    static func values(_ message: OpaquePointer, _ index: Int) -> [String: WireValue] {
        guard let value = argument(message, index) else { return [:] }
        defer { g_variant_unref(value) }
        guard g_variant_is_of_type(value, gvariantType("a{sv}")) != 0 else { return [:] }
        let count = Int(g_variant_n_children(value))
        var values: [String: WireValue] = [:]
        values.reserveCapacity(count)
        for index in 0..<count {
            let entry = g_variant_get_child_value(value, gsize(index))!
            let key = g_variant_get_child_value(entry, 0)!
            var inner = g_variant_get_child_value(entry, 1)!
            while g_variant_is_of_type(inner, gvariantType("v")) != 0, let unwrapped = g_variant_get_variant(inner) {
                g_variant_unref(inner)
                inner = unwrapped
            }
            values[String(cString: g_variant_get_string(key, nil))] = WireValue(taking: inner)
            g_variant_unref(key)
            g_variant_unref(entry)
        }
        return values
    }

    /// A GVariantType for a type string (a definite type: GLib's type strings are types).
    static func gvariantType(_ text: StaticString) -> OpaquePointer {
        OpaquePointer(text.utf8Start)
    }

    /// The error's name and message, as a person reads them.
    static func errorText(_ message: OpaquePointer) -> String {
        let name = g_dbus_message_get_error_name(message).map { String(cString: $0) } ?? "an error"
        let detail = string(message, 0) ?? ""
        return detail.isEmpty ? name : name + ": " + detail
    }
}
