/// Where prefsd keeps the read-only snapshots of the domains GSettings programs loaded, and
/// how a snapshot file is laid out: the one definition the service (which writes them) and
/// the GIO module (which reads them, built in Embedded Swift: so no Foundation here) share.
///
/// **Where.** `$XDG_RUNTIME_DIR/prefsd/snapshots-<bus>/<domain>`, both directories mode 0700,
/// where `<bus>` names the bus prefsd serves (``busKey(_:)``): prefsd instances on two buses
/// never see each other's snapshots, and a client finds its bus's without asking the bus.
/// A domain name (`A-Z a-z 0-9 . _ -`, never starting with `.`) is the file's name as is;
/// files being written start with `.`.
///
/// **Layout.** 8 bytes of ``magic``, the validity flag (byte 8: ``valid`` or ``stale``),
/// 7 bytes of padding, then one marshalled D-Bus message (a signal `Snapshot` whose body is
/// `(s a{sv} as)`: the domain, what `ReadDomain` answers, what `ForcedKeys` answers).
///
/// **Validity.** prefsd flips the flag to ``stale`` with `pwrite` before any change to what
/// the domain reads is answered or signalled; a reader reads the flag (`pread`) on every
/// read it answers from the snapshot, and falls back to asking prefsd when it is not
/// ``valid``. Readers never map the file: a file another process can truncate must not be
/// able to fault the program that reads it. The file is never changed otherwise: a new
/// snapshot is a new file renamed over the old.
public enum SnapshotLayout {
    /// The first 8 bytes of a snapshot file.
    public static let magic: [UInt8] = [0x70, 0x72, 0x65, 0x66, 0x73, 0x6E, 0x70, 0x31]  // "prefsnp1"
    /// The offset of the validity flag.
    public static let flagOffset = 8
    /// The offset of the marshalled message (8-aligned).
    public static let headerSize = 16
    /// The flag of a snapshot that still answers what a load would.
    public static let valid: UInt8 = 0
    /// The flag of a snapshot that no longer may be read.
    public static let stale: UInt8 = 1
    /// The most bytes a reader reads (a larger file is ignored: the reader asks prefsd).
    public static let maximumFileBytes = 64 << 20
    /// The member of the message a snapshot holds.
    public static let member = "Snapshot"

    /// The directory of the snapshots of the bus at `busAddress`, under the user's runtime
    /// directory (`nil` when either is unknown or not absolute).
    public static func directory(runtimeDirectory: String?, busAddress: String?) -> String? {
        guard let runtimeDirectory, runtimeDirectory.utf8.first == UInt8(ascii: "/"),
            let busAddress, !busAddress.isEmpty
        else { return nil }
        return parent(runtimeDirectory: runtimeDirectory) + "/snapshots-" + busKey(busAddress)
    }

    /// `$XDG_RUNTIME_DIR/prefsd`, the parent of every bus's snapshot directory.
    public static func parent(runtimeDirectory: String) -> String {
        var base = runtimeDirectory
        while base.utf8.count > 1 && base.utf8.last == UInt8(ascii: "/") { base.removeLast() }
        return base + "/prefsd"
    }

    /// The bus address a session-bus client connects to, as GDBus and libdbus find it:
    /// `DBUS_SESSION_BUS_ADDRESS`, else the runtime directory's `bus` socket.
    public static func sessionBusAddress(environmentAddress: String?, runtimeDirectory: String?) -> String? {
        if let environmentAddress, !environmentAddress.isEmpty { return environmentAddress }
        guard let runtimeDirectory, runtimeDirectory.utf8.first == UInt8(ascii: "/") else { return nil }
        return "unix:path=" + runtimeDirectory + "/bus"
    }

    /// A name of the bus at `address`: 16 hex digits of the FNV-1a hash of the address
    /// without its `guid=` parameters (the bus daemon's own address carries one, a client's
    /// may not). Two buses listening at the same time never share an address; a bus that
    /// comes back at the same address gets a fresh prefsd, which clears what it finds.
    public static func busKey(_ address: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in normalized(address) {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for shift in stride(from: 60, through: 0, by: -4) {
            text.append(digits[Int((hash >> UInt64(shift)) & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The bytes of `address` without `guid=…` parameters (entries are `;`-separated,
    /// parameters `,`-separated after the transport's `:`).
    static func normalized(_ address: String) -> [UInt8] {
        let guid: [UInt8] = Array("guid=".utf8)
        var out: [UInt8] = []
        for entry in address.utf8.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: true) {
            if !out.isEmpty { out.append(UInt8(ascii: ";")) }
            guard let colon = entry.firstIndex(of: UInt8(ascii: ":")) else {
                out.append(contentsOf: entry)
                continue
            }
            out.append(contentsOf: entry[entry.startIndex...colon])
            var first = true
            let parameters = entry[entry.index(after: colon)...]
            for parameter in parameters.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: true) {
                if parameter.starts(with: guid) { continue }
                if !first { out.append(UInt8(ascii: ",")) }
                out.append(contentsOf: parameter)
                first = false
            }
        }
        return out
    }

    /// Whether `name` may be a snapshot file's name: a domain name (1–255 bytes of
    /// `A-Z a-z 0-9 . _ -`, not starting with `.` or `-`).
    public static func isFileName(_ name: String) -> Bool {
        let bytes = name.utf8
        guard let first = bytes.first, bytes.count <= 255,
            first != UInt8(ascii: "."), first != UInt8(ascii: "-")
        else { return false }
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                continue
            default:
                return false
            }
        }
        return true
    }
}
