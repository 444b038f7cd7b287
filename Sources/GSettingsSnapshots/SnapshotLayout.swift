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
/// 7 bytes of padding, the ``checksum(_:)`` of the body (bytes 16–23, little-endian), then
/// the body: one marshalled D-Bus message (a signal `Snapshot` whose body is `(s a{sv} as)`:
/// the domain, what `ReadDomain` answers, what `ForcedKeys` answers). A reader takes a
/// snapshot only when the checksum matches, so a changed byte, a torn write or a file cut
/// short is never read as values.
///
/// **Validity.** A snapshot may be read only while both hold: its flag says ``valid``, and
/// the prefsd that wrote it holds its lock on the file (an open file description lock,
/// `F_OFD_SETLK`, a read lock over the whole file, taken before the file is named and kept
/// while prefsd keeps the snapshot). prefsd flips the flag to ``stale`` with `pwrite`
/// before any change to what the domain reads is answered or signalled; the kernel drops the
/// lock when prefsd exits, however it exits (`kill -9` too). So a snapshot stays valid only
/// while the prefsd that wrote it is alive and serving (no other prefsd can serve its store
/// meanwhile: the store's lock), whichever spelling of the bus address led to its directory
/// and whether or not a later prefsd clears that directory. A reader tests both (`pread` of
/// the flag, `F_OFD_GETLK` on its descriptor) on every read it answers from the snapshot,
/// and falls back to asking prefsd when either fails. Readers never map the file: a file
/// another process can truncate must not be able to fault the program that reads it. The
/// file is never changed otherwise: a new snapshot is a new file renamed over the old.
public enum SnapshotLayout {
    /// The first 8 bytes of a snapshot file (the layout's version is the last: a reader of
    /// another version finds no snapshot and asks prefsd).
    public static let magic: [UInt8] = [0x70, 0x72, 0x65, 0x66, 0x73, 0x6E, 0x70, 0x32]  // "prefsnp2"
    /// The offset of the validity flag.
    public static let flagOffset = 8
    /// The offset of the body's checksum (8 bytes, little-endian).
    public static let checksumOffset = 16
    /// The offset of the marshalled message (8-aligned).
    public static let headerSize = 24
    /// The flag of a snapshot that still answers what a load would.
    public static let valid: UInt8 = 0
    /// The flag of a snapshot that no longer may be read.
    public static let stale: UInt8 = 1
    /// The most bytes a reader reads (a larger file is ignored: the reader asks prefsd).
    public static let maximumFileBytes = 64 << 20
    /// The member of the message a snapshot holds.
    public static let member = "Snapshot"
    /// `fcntl`'s `F_OFD_SETLK` on Linux, which prefsd takes its lock on a snapshot with
    /// (Swift's Glibc module leaves it out: it needs `_GNU_SOURCE`). Readers test the lock
    /// with `F_OFD_GETLK` (in the module's C shim).
    public static let setLockCommand: Int32 = 37

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

    /// A name of the bus at `address`: 16 hex digits of the FNV-1a hash of the address as
    /// ``normalized(_:)`` spells it, so the spellings of one address a client may be given
    /// (with or without the daemon's `guid=`, `%`-escaped or not, `/./` or `//` in a socket's
    /// path) name one directory. Two buses listening at the same time never share an
    /// address. A spelling this misses (a path through a symbolic link) only costs the reader
    /// its snapshot: validity never depends on the directory (see the type's notes).
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

    /// One spelling of `address` (entries `;`-separated, each `transport:key=value,…`):
    /// without `guid=` parameters (the bus daemon's own address carries one, a client's may
    /// not), each value `%`-unescaped and escaped again the one way (bytes the D-Bus
    /// specification lets stand as they are, the others as `%xx`), a `unix` `path=` without
    /// `.` components and repeated `/` (the same socket however written), parameters in
    /// byte order.
    public static func normalized(_ address: String) -> [UInt8] {
        let guid: [UInt8] = Array("guid".utf8)
        let unix: [UInt8] = Array("unix".utf8)
        let path: [UInt8] = Array("path".utf8)
        var out: [UInt8] = []
        for entry in Array(address.utf8).split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: true) {
            if !out.isEmpty { out.append(UInt8(ascii: ";")) }
            guard let colon = entry.firstIndex(of: UInt8(ascii: ":")) else {
                out.append(contentsOf: entry)
                continue
            }
            let transport = Array(entry[entry.startIndex..<colon])
            var parameters: [[UInt8]] = []
            for parameter in entry[entry.index(after: colon)...].split(separator: UInt8(ascii: ","), omittingEmptySubsequences: true) {
                guard let equals = parameter.firstIndex(of: UInt8(ascii: "=")) else {
                    parameters.append(Array(parameter))
                    continue
                }
                let key = Array(parameter[parameter.startIndex..<equals])
                if key == guid { continue }
                var value = unescaped(parameter[parameter.index(after: equals)...])
                if transport == unix && key == path { value = normalizedPath(value) }
                parameters.append(key + [UInt8(ascii: "=")] + escaped(value))
            }
            parameters.sort { $0.lexicographicallyPrecedes($1) }
            out.append(contentsOf: transport)
            out.append(UInt8(ascii: ":"))
            for (index, parameter) in parameters.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                out.append(contentsOf: parameter)
            }
        }
        return out
    }

    /// A value's bytes with its `%xx` escapes decoded (a `%` not followed by two hex digits
    /// stands for itself).
    private static func unescaped(_ value: ArraySlice<UInt8>) -> [UInt8] {
        let bytes = Array(value)
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count, let high = hexValue(bytes[index + 1]),
                let low = hexValue(bytes[index + 2])
            {
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return out
    }

    /// `bytes` as an address value: the optionally-escaped bytes of the D-Bus specification
    /// (`-0-9A-Za-z_/.\*`) as they are, every other as `%xx`.
    private static func escaped(_ bytes: [UInt8]) -> [UInt8] {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "/"), UInt8(ascii: "."), UInt8(ascii: "\\"), UInt8(ascii: "*"):
                out.append(byte)
            default:
                out.append(UInt8(ascii: "%"))
                out.append(digits[Int(byte >> 4)])
                out.append(digits[Int(byte & 0xF)])
            }
        }
        return out
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// A file system path without its `.` components and empty ones (`//`, a trailing `/`):
    /// the same file for every path. `..` is kept (through a symbolic link it is not the
    /// parent the text names).
    private static func normalizedPath(_ bytes: [UInt8]) -> [UInt8] {
        let slash = UInt8(ascii: "/")
        var out: [UInt8] = bytes.first == slash ? [slash] : []
        for component in bytes.split(separator: slash, omittingEmptySubsequences: true) {
            if component.count == 1 && component.first == UInt8(ascii: ".") { continue }
            if !out.isEmpty && out.last != slash { out.append(slash) }
            out.append(contentsOf: component)
        }
        return out
    }

    // MARK: The checksum

    /// The header of a snapshot whose body's ``checksum(_:)`` is `checksum`, flag ``valid``.
    public static func header(checksum: UInt64) -> [UInt8] {
        var header = magic + [UInt8](repeating: 0, count: headerSize - magic.count)
        header[flagOffset] = valid
        for index in 0..<8 { header[checksumOffset + index] = UInt8(truncatingIfNeeded: checksum >> UInt64(8 * index)) }
        return header
    }

    /// The checksum a snapshot's header holds (`header`: at least ``headerSize`` bytes).
    public static func storedChecksum(_ header: UnsafeRawBufferPointer) -> UInt64 {
        var checksum: UInt64 = 0
        for index in 0..<8 { checksum |= UInt64(header[checksumOffset + index]) << UInt64(8 * index) }
        return checksum
    }

    /// XXH64 (seed 0) of `bytes`: the checksum of a snapshot's body. Fast (8 bytes a step,
    /// four lanes), so checking it costs a first read little; 64 bits, so damage that still
    /// matches is out of reach of chance.
    public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
        let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
        let prime3: UInt64 = 0x1656_67B1_9E37_79F9
        let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63
        let prime5: UInt64 = 0x27D4_EB2F_1656_67C5
        func rotated(_ value: UInt64, _ count: UInt64) -> UInt64 { value << count | value >> (64 - count) }
        func round(_ accumulator: UInt64, _ input: UInt64) -> UInt64 {
            rotated(accumulator &+ input &* prime2, 31) &* prime1
        }
        func word(_ offset: Int) -> UInt64 { UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
        let count = bytes.count
        var offset = 0
        var hash: UInt64
        if count >= 32 {
            var lanes = (prime1 &+ prime2, prime2, UInt64(0), 0 &- prime1)
            while count - offset >= 32 {
                lanes.0 = round(lanes.0, word(offset))
                lanes.1 = round(lanes.1, word(offset + 8))
                lanes.2 = round(lanes.2, word(offset + 16))
                lanes.3 = round(lanes.3, word(offset + 24))
                offset += 32
            }
            hash = rotated(lanes.0, 1) &+ rotated(lanes.1, 7) &+ rotated(lanes.2, 12) &+ rotated(lanes.3, 18)
            hash = (hash ^ round(0, lanes.0)) &* prime1 &+ prime4
            hash = (hash ^ round(0, lanes.1)) &* prime1 &+ prime4
            hash = (hash ^ round(0, lanes.2)) &* prime1 &+ prime4
            hash = (hash ^ round(0, lanes.3)) &* prime1 &+ prime4
        } else {
            hash = prime5
        }
        hash &+= UInt64(count)
        while count - offset >= 8 {
            hash = rotated(hash ^ round(0, word(offset)), 27) &* prime1 &+ prime4
            offset += 8
        }
        if count - offset >= 4 {
            let half = UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            hash = rotated(hash ^ half &* prime1, 23) &* prime2 &+ prime3
            offset += 4
        }
        while offset < count {
            hash = rotated(hash ^ UInt64(bytes[offset]) &* prime5, 11) &* prime1
            offset += 1
        }
        hash ^= hash >> 33
        hash &*= prime2
        hash ^= hash >> 29
        hash &*= prime3
        hash ^= hash >> 32
        return hash
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
