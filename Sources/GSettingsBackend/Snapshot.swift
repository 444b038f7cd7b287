import CGSettingsBackend

/// A domain's snapshot as prefsd keeps it for GSettings programs (`SnapshotLayout`): what a
/// load of the domain answers, mapped from a file, so that the first read of a domain need
/// not wait on the bus. It answers only while its validity flag says so: prefsd flips the
/// flag before any change to the domain is answered or signalled, and ``isValid`` reads the
/// mapped flag anew on every call, so a read never answers a value a change already replaced.
///
/// Read once, at ``open(_:in:)``: the file's content never changes (a new snapshot is a new
/// file), only its flag.
final class Snapshot {
    /// What `ReadDomain` answered.
    let values: [String: WireValue]
    /// What `ForcedKeys` answered.
    let forced: Set<String>
    private let mapping: UnsafeRawPointer
    private let length: Int

    private init(values: [String: WireValue], forced: Set<String>, mapping: UnsafeRawPointer, length: Int) {
        self.values = values
        self.forced = forced
        self.mapping = mapping
        self.length = length
    }

    deinit {
        prefsd_snapshot_unmap(mapping, length)
    }

    /// Whether the snapshot still answers what a load would (prefsd has not flipped it).
    var isValid: Bool {
        prefsd_snapshot_byte(mapping, SnapshotLayout.flagOffset) == SnapshotLayout.valid
    }

    /// The snapshot of `domain` in `directory`, when there is a valid one; `nil` for no file,
    /// a stale one, or anything unreadable or malformed (the caller asks prefsd instead).
    static func open(_ domain: String, in directory: String) -> Snapshot? {
        guard SnapshotLayout.isFileName(domain) else { return nil }
        var length = 0
        guard let mapping = prefsd_snapshot_map(directory, domain, SnapshotLayout.maximumFileBytes, &length) else { return nil }
        guard let (values, forced) = contents(mapping, length, domain: domain) else {
            prefsd_snapshot_unmap(mapping, length)
            return nil
        }
        let snapshot = Snapshot(values: values, forced: forced, mapping: mapping, length: length)
        return snapshot.isValid ? snapshot : nil
    }

    /// The values and forced keys a well-formed snapshot of `domain` holds.
    private static func contents(_ mapping: UnsafeRawPointer, _ length: Int, domain: String) -> ([String: WireValue], Set<String>)? {
        let header = SnapshotLayout.headerSize
        guard length >= header + 16, prefsd_snapshot_byte(mapping, SnapshotLayout.flagOffset) == SnapshotLayout.valid else { return nil }
        for (index, byte) in SnapshotLayout.magic.enumerated() where mapping.load(fromByteOffset: index, as: UInt8.self) != byte {
            return nil
        }
        let blob = UnsafeMutablePointer(mutating: (mapping + header).assumingMemoryBound(to: guchar.self))
        let blobLength = length - header
        var error: UnsafeMutablePointer<GError>?
        guard g_dbus_message_bytes_needed(blob, 16, &error) == blobLength else {
            if let error { g_error_free(error) }
            return nil
        }
        guard let message = g_dbus_message_new_from_blob(blob, gsize(blobLength), G_DBUS_CAPABILITY_FLAGS_NONE, &error) else {
            if let error { g_error_free(error) }
            return nil
        }
        defer { g_object_unref(UnsafeMutableRawPointer(message)) }
        guard g_dbus_message_get_message_type(message) == G_DBUS_MESSAGE_TYPE_SIGNAL,
            let member = g_dbus_message_get_member(message), String(cString: member) == SnapshotLayout.member,
            let signature = g_dbus_message_get_signature(message), String(cString: signature) == "sa{sv}as",
            Messages.string(message, 0) == domain
        else { return nil }
        return (Messages.values(message, 1), Set(Messages.stringList(message, 2)))
    }

    /// This process's snapshot directory: its session bus's, under its runtime directory
    /// (`nil` without one).
    static func directory() -> String? {
        let runtime = g_getenv("XDG_RUNTIME_DIR").map { String(cString: $0) }
        let address = SnapshotLayout.sessionBusAddress(
            environmentAddress: g_getenv("DBUS_SESSION_BUS_ADDRESS").map { String(cString: $0) }, runtimeDirectory: runtime)
        return SnapshotLayout.directory(runtimeDirectory: runtime, busAddress: address)
    }
}
