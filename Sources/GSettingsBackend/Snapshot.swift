import CGSettingsBackend

/// A domain's snapshot as prefsd keeps it for GSettings programs (`SnapshotLayout`): what a
/// load of the domain answers, read from a file, so that the first read of a domain need
/// not wait on the bus. It answers only while it is valid: ``isValid`` reads the file's flag
/// anew (prefsd flips it before any change to the domain is answered or signalled) and
/// tests that the prefsd that wrote it still holds its lock on the file (it does until it
/// exits, however it exits) on every call, so a read never answers a value a change already
/// replaced, nor one a dead prefsd left.
///
/// Read once, at ``open(_:in:)``, into memory (never mapped: another process may truncate
/// the file) and taken only when the body's checksum matches the header's: the content
/// never changes (a new snapshot is a new file), only the flag. The descriptor stays open
/// for the checks.
final class Snapshot {
    /// What `ReadDomain` answered.
    let values: [String: WireValue]
    /// What `ForcedKeys` answered.
    let forced: Set<String>
    private let descriptor: Int32

    private init(values: [String: WireValue], forced: Set<String>, descriptor: Int32) {
        self.values = values
        self.forced = forced
        self.descriptor = descriptor
    }

    deinit {
        prefsd_snapshot_close(descriptor)
    }

    /// Whether the snapshot still answers what a load would: prefsd has not flipped it and
    /// still holds its lock (two system calls, no access to memory another process shares).
    var isValid: Bool {
        prefsd_snapshot_check(descriptor, SnapshotLayout.flagOffset, SnapshotLayout.valid) != 0
    }

    /// The snapshot of `domain` in `directory`, when there is a valid one; `nil` for no file,
    /// a stale one, one whose prefsd is gone, or anything unreadable, malformed or damaged
    /// (the caller asks prefsd instead).
    static func open(_ domain: String, in directory: String) -> Snapshot? {
        guard SnapshotLayout.isFileName(domain) else { return nil }
        var content: UnsafeMutableRawPointer?
        var length = 0
        let descriptor = prefsd_snapshot_open(directory, domain, SnapshotLayout.maximumFileBytes, &content, &length)
        guard descriptor >= 0, let content else { return nil }
        defer { g_free(content) }
        guard prefsd_snapshot_check(descriptor, SnapshotLayout.flagOffset, SnapshotLayout.valid) != 0,
            let (values, forced) = contents(UnsafeRawBufferPointer(start: content, count: length), domain: domain)
        else {
            prefsd_snapshot_close(descriptor)
            return nil
        }
        // Checked again once read: what was read is what a valid snapshot holds.
        let snapshot = Snapshot(values: values, forced: forced, descriptor: descriptor)
        return snapshot.isValid ? snapshot : nil
    }

    /// The values and forced keys a well-formed, undamaged snapshot of `domain` holds.
    private static func contents(_ file: UnsafeRawBufferPointer, domain: String) -> ([String: WireValue], Set<String>)? {
        let header = SnapshotLayout.headerSize
        guard file.count >= header + 16, let base = file.baseAddress else { return nil }
        for (index, byte) in SnapshotLayout.magic.enumerated() where file[index] != byte {
            return nil
        }
        let body = UnsafeRawBufferPointer(rebasing: file[header...])
        guard SnapshotLayout.checksum(body) == SnapshotLayout.storedChecksum(file) else { return nil }
        let blob = UnsafeMutablePointer(mutating: (base + header).assumingMemoryBound(to: guchar.self))
        var error: UnsafeMutablePointer<GError>?
        guard g_dbus_message_bytes_needed(blob, 16, &error) == body.count else {
            if let error { g_error_free(error) }
            return nil
        }
        guard let message = g_dbus_message_new_from_blob(blob, gsize(body.count), G_DBUS_CAPABILITY_FLAGS_NONE, &error) else {
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
