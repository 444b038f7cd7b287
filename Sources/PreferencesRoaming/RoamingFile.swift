import PreferencesModel

/// One machine's file in the roaming folder: its identity, its name and its changes, oldest
/// first (the file is append-only between compactions).
///
/// The encoding (all integers little-endian, lengths as unsigned LEB128 varints):
///
/// | part | bytes |
/// | --- | --- |
/// | magic | `PRFSROAM` |
/// | version | `1` |
/// | kind | `1` (a machine's changes) or `2` (what this machine adopted; kept outside the folder) |
/// | machine | 16 bytes: the writer's identity |
/// | name | varint length, UTF-8 |
/// | entry count | varint |
/// | each entry | varint length + domain, varint length + key, (kind 2: 16 bytes of machine), wall time (8 bytes), counter (4 bytes), `0` (removed) or `1` + varint length + the value in the store's encoding |
/// | checksum | 4 bytes: FNV-1a (32 bits) of everything before it |
///
/// Decoding checks every length against what is left, every name as the bus does, every
/// value with the caller's check (nesting, size), and the checksum: a truncated, damaged
/// or hostile file is refused whole.
public struct RoamingFile: Sendable, Equatable {
    /// What the file holds.
    public enum Kind: UInt8, Sendable {
        /// A machine's own changes (in the folder).
        case changes = 1
        /// The other machines' changes this machine adopted (outside the folder).
        case adopted = 2
    }

    /// What the file holds.
    public var kind: Kind
    /// The machine that wrote it.
    public var machine: MachineID
    /// The machine's name.
    public var name: String
    /// The entries, oldest first.
    public var entries: [RoamingEntry]

    /// Makes a file.
    public init(kind: Kind = .changes, machine: MachineID, name: String, entries: [RoamingEntry]) {
        self.kind = kind
        self.machine = machine
        self.name = name
        self.entries = entries
    }

    static let magic = Array("PRFSROAM".utf8)
    static let version: UInt8 = 1

    /// The file's bytes.
    public func encoded() -> [UInt8] {
        var out = Self.magic
        out.append(Self.version)
        out.append(kind.rawValue)
        out.append(contentsOf: machine.bytes)
        Self.appendBytes(Array(name.utf8), to: &out)
        Self.appendVarint(UInt64(entries.count), to: &out)
        for entry in entries {
            Self.appendBytes(Array(entry.key.domain.rawValue.utf8), to: &out)
            Self.appendBytes(Array(entry.key.key.utf8), to: &out)
            if kind == .adopted { out.append(contentsOf: entry.stamp.machine.bytes) }
            for shift in stride(from: 0, to: 64, by: 8) { out.append(UInt8(truncatingIfNeeded: entry.stamp.time.wall >> UInt64(shift))) }
            for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: entry.stamp.time.counter >> UInt32(shift))) }
            if let value = entry.value {
                out.append(1)
                Self.appendBytes(value.encoded(), to: &out)
            } else {
                out.append(0)
            }
        }
        let sum = Self.checksum(out[...])
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: sum >> UInt32(shift))) }
        return out
    }

    /// Decodes and validates a file.
    ///
    /// - Parameters:
    ///   - bytes: the whole file.
    ///   - limits: its bounds.
    ///   - now: this machine's clock, in milliseconds (times later than `now` plus the
    ///     allowed skew are refused).
    ///   - checkValue: the check every value written on the bus passes (nesting, size);
    ///     it throws a message saying what is wrong.
    /// - Throws: `RoamingError`, saying what is wrong and where.
    public static func decode(
        _ bytes: [UInt8], limits: RoamingLimits, now: UInt64,
        checkValue: (PropertyListValue, _ subject: String) throws -> Void
    ) throws(RoamingError) -> RoamingFile {
        guard bytes.count <= limits.fileBytes else {
            throw .overLimit("the file has \(bytes.count) bytes, over the \(limits.fileBytes) a roaming file may have")
        }
        guard bytes.count >= magic.count + 2 + 16 + 4, Array(bytes.prefix(magic.count)) == magic else {
            throw .corrupt("the file is not a prefsd roaming file (it does not start with PRFSROAM)")
        }
        let body = bytes.dropLast(4)
        let stored = bytes.suffix(4).enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << UInt32(8 * $1.offset) }
        guard checksum(body) == stored else {
            throw .corrupt("the file's checksum does not match: it is truncated or damaged")
        }
        var reader = Reader(bytes: body, position: body.startIndex + magic.count)
        guard try reader.byte() == version else { throw .corrupt("the file has a format version this prefsd does not know") }
        guard let kind = Kind(rawValue: try reader.byte()) else { throw .corrupt("the file is of a kind this prefsd does not know") }
        let machine = MachineID(bytes: try reader.take(16))
        let name = try reader.string(limit: MachineName.maximumLength, what: "the machine name")
        guard MachineName.isValid(name) else {
            throw .invalidName("the machine name \"\(name)\" is not 1–64 characters of A-Z a-z 0-9 . _ -")
        }
        let count = try reader.varint()
        guard count <= UInt64(limits.entries) else {
            throw .overLimit("the file has \(count) entries, over the \(limits.entries) a roaming file may have")
        }
        var entries: [RoamingEntry] = []
        entries.reserveCapacity(Int(count))
        for index in 0..<Int(count) {
            let domainText = try reader.string(limit: 255, what: "the domain of entry \(index)")
            guard let domain = try? DomainName(domainText) else {
                throw .invalidName("entry \(index) names the domain \"\(domainText)\", which is not a valid domain name")
            }
            let key = try reader.string(limit: PreferenceKey.maximumLength, what: "the key of entry \(index)")
            if let problem = PreferenceKey.problem(with: key) {
                throw .invalidName("entry \(index) of \(domain) has an invalid key: \(problem)")
            }
            // By bytes: `==` on String is canonical equivalence, under which a key always
            // equals its own NFC form.
            guard PreferenceKey.normalized(key).utf8.elementsEqual(key.utf8) else {
                throw .invalidName("entry \(index) of \(domain) has a key not in Unicode normalization form C")
            }
            let entryMachine = kind == .adopted ? MachineID(bytes: try reader.take(16)) : machine
            let wall = try reader.take(8).enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << UInt64(8 * $1.offset) }
            let counter = try reader.take(4).enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << UInt32(8 * $1.offset) }
            let (limit, overflow) = now.addingReportingOverflow(limits.futureSkewMilliseconds)
            if !overflow && wall > limit {
                throw .clock(
                    "entry \(index) (\(domain) \"\(key)\") is dated \((wall - now) / 1000) s ahead of this machine's clock, more than the \(limits.futureSkewMilliseconds / 1000) s allowed: is that machine's clock right?"
                )
            }
            var value: PropertyListValue?
            switch try reader.byte() {
            case 0: value = nil
            case 1:
                let encoded = try reader.bytes(limit: limits.fileBytes, what: "the value of entry \(index)")
                let decoded: PropertyListValue
                do {
                    decoded = try PropertyListValue(encoded: encoded)
                } catch {
                    throw .invalidValue("the value of \(domain) \"\(key)\" (entry \(index)) does not decode: \(error)")
                }
                do {
                    try checkValue(decoded, "the value of \(domain) \"\(key)\"")
                } catch {
                    throw .invalidValue("\(error)")
                }
                value = decoded
            default:
                throw .corrupt("entry \(index) has an unknown kind of change")
            }
            entries.append(
                RoamingEntry(
                    key: RoamingKey(domain, key), value: value,
                    stamp: RoamingStamp(time: HybridTime(wall: wall, counter: counter), machine: entryMachine)))
        }
        guard reader.position == body.endIndex else { throw .corrupt("the file has bytes after its last entry") }
        return RoamingFile(kind: kind, machine: machine, name: name, entries: entries)
    }

    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var hash: UInt32 = 0x811c9dc5
        for byte in bytes {
            hash ^= UInt32(byte)
            hash = hash &* 0x0100_0193
        }
        return hash
    }

    static func appendVarint(_ value: UInt64, to out: inout [UInt8]) {
        var rest = value
        while rest >= 0x80 {
            out.append(UInt8(rest & 0x7f) | 0x80)
            rest >>= 7
        }
        out.append(UInt8(rest))
    }

    static func appendBytes(_ bytes: [UInt8], to out: inout [UInt8]) {
        appendVarint(UInt64(bytes.count), to: &out)
        out.append(contentsOf: bytes)
    }

    /// Reads a file's parts, refusing any length past its end.
    struct Reader {
        let bytes: ArraySlice<UInt8>
        var position: Int

        mutating func byte() throws(RoamingError) -> UInt8 {
            guard position < bytes.endIndex else { throw .corrupt("the file ends in the middle of an entry") }
            defer { position += 1 }
            return bytes[position]
        }

        mutating func take(_ count: Int) throws(RoamingError) -> ArraySlice<UInt8> {
            guard count >= 0, bytes.endIndex - position >= count else { throw .corrupt("the file ends in the middle of an entry") }
            defer { position += count }
            return bytes[position..<position + count]
        }

        mutating func varint() throws(RoamingError) -> UInt64 {
            var value: UInt64 = 0
            for index in 0..<10 {
                let byte = try self.byte()
                value |= UInt64(byte & 0x7f) << UInt64(7 * index)
                if byte & 0x80 == 0 { return value }
            }
            throw .corrupt("the file holds a length of more than 10 bytes")
        }

        mutating func bytes(limit: Int, what: String) throws(RoamingError) -> ArraySlice<UInt8> {
            let count = try varint()
            guard count <= UInt64(limit) else { throw .overLimit("\(what) has \(count) bytes, over the \(limit) allowed") }
            return try take(Int(count))
        }

        mutating func string(limit: Int, what: String) throws(RoamingError) -> String {
            let raw = try bytes(limit: limit, what: what)
            guard let text = String(validating: raw, as: UTF8.self) else { throw .invalidName("\(what) is not valid UTF-8") }
            return text
        }
    }
}
