import PreferencesModel

/// Reads the roaming folder into a ledger, for the service: this machine's file and the
/// adopted state at start, then, at every pass, the other machines' files that changed
/// since they were last read. Keeps what it found of each file (the version last read, the
/// files set aside and why) and returns what it did, for the log.
public struct RoamingReader: Sendable {
    /// A file not used, and why.
    public struct SetAside: Sendable, Equatable {
        /// Why, as a message a person can act on.
        public var reason: String
        /// Where its copy is, if one was kept.
        public var copy: String?

        /// Makes one.
        public init(reason: String, copy: String?) {
            self.reason = reason
            self.copy = copy
        }
    }

    /// What a load or a pass did, for the log.
    public enum Event: Sendable, Equatable {
        /// Another machine's file was read, with this many entries.
        case read(RoamingFolder.FileName, entries: Int)
        /// Another machine's file was set aside.
        case setAside(RoamingFolder.FileName, SetAside)
        /// This machine's file or its adopted state was refused at start.
        case refused(RoamingFolder.FileName, SetAside)
    }

    /// The folder.
    public let folder: RoamingFolder
    /// The files' bounds.
    public let limits: RoamingLimits
    /// The check every value written on the bus passes (nesting, size).
    let checkValue: @Sendable (PropertyListValue, String) throws -> Void

    /// The version of each other machine's file last read (or set aside).
    public private(set) var seen: [RoamingFolder.FileName: RoamingFolder.Fingerprint] = [:]
    /// The other machines' files set aside, by name.
    public private(set) var setAside: [RoamingFolder.FileName: SetAside] = [:]
    /// This machine's files refused at start (its file in the folder, its adopted state),
    /// listed until prefsd stops.
    public private(set) var refused: [RoamingFolder.FileName: SetAside] = [:]
    /// Valid files not read because `limits.machines` others are: read once a place is free.
    public private(set) var waitingForPlace: Set<RoamingFolder.FileName> = []

    /// Makes a reader; nothing is read until ``load(machine:name:now:)``.
    public init(folder: RoamingFolder, limits: RoamingLimits, checkValue: @escaping @Sendable (PropertyListValue, String) throws -> Void) {
        self.folder = folder
        self.limits = limits
        self.checkValue = checkValue
    }

    /// What ``load(machine:name:now:)`` found.
    public struct Loaded: Sendable {
        /// The ledger.
        public var ledger: RoamingLedger
        /// Whether this machine's file was refused: it is to be written anew from the ledger.
        public var rewriteOwn: Bool
        /// What was refused, for the log.
        public var events: [Event]
    }

    /// The ledger of `machine`, started from its file in the folder and its adopted state
    /// (either may be missing).
    ///
    /// Both are checked as another machine's file is: names, values, sizes, the writer's
    /// identity, and times at most `limits.futureSkewMilliseconds` ahead of `now`. Either
    /// can be replaced while prefsd is down (by the sync engine, or anyone else), and one
    /// dated years ahead would otherwise carry this machine's clock there for good, so that
    /// no other machine's change could win again. One that fails is refused whole: a copy
    /// is kept as for a file set aside, it is listed in ``refused``, and the ledger starts
    /// without it (without this machine's file, its values are published anew where they
    /// differ from what it adopted; without the adopted state, other machines' changes are
    /// compared anew).
    public mutating func load(machine: MachineID, name: String, now: UInt64) -> Loaded {
        var events: [Event] = []
        var own: RoamingFile?
        var rewriteOwn = false
        let ownName = RoamingFolder.FileName(RoamingFolder.fileName(for: machine))
        var bytes: [UInt8]?
        do throws(RoamingError) {
            bytes = try RoamingFolder.readIfPresent(folder.directory.appendingPathComponent(ownName.text), limit: limits.fileBytes)
            if let bytes {
                let file = try RoamingFile.decode(bytes, limits: limits, now: now, checkValue: checkValue)
                guard file.kind == .changes, file.machine == machine else {
                    throw .corrupt("the file says it was written by \(file.machine), not by this machine")
                }
                own = file
            }
        } catch {
            rewriteOwn = true
            let entry = SetAside(
                reason: "this machine's own file, refused at start and written anew from this machine's values: \(error)",
                copy: bytes.flatMap { keepCopy(ownName, bytes: $0) })
            refused[ownName] = entry
            events.append(.refused(ownName, entry))
        }
        var adopted: RoamingFile?
        var big = limits
        big.fileBytes *= 8
        big.entries *= 8
        bytes = nil
        do throws(RoamingError) {
            bytes = try RoamingFolder.readIfPresent(folder.adoptedURL, limit: big.fileBytes)
            if let bytes {
                let file = try RoamingFile.decode(bytes, limits: big, now: now, checkValue: checkValue)
                guard file.kind == .adopted, file.machine == machine else {
                    throw .corrupt("the file is not this machine's adopted state")
                }
                adopted = file
            }
        } catch {
            let copyName = RoamingFolder.FileName(folder.adoptedURL.lastPathComponent)
            let entry = SetAside(
                reason: "this machine's adopted state, refused at start (other machines' changes are compared anew): \(error)",
                copy: bytes.flatMap { keepCopy(copyName, bytes: $0) })
            let name = RoamingFolder.FileName("\(folder.localDirectory.lastPathComponent)/\(copyName.text)")
            refused[name] = entry
            events.append(.refused(name, entry))
        }
        let ledger = RoamingLedger(machine: machine, name: own?.name ?? name, own: own, adopted: adopted)
        return Loaded(ledger: ledger, rewriteOwn: rewriteOwn, events: events)
    }

    /// Reads the other machines' files that changed since the last pass into `ledger`;
    /// forgets the machines whose files left the folder.
    ///
    /// At most `limits.machines` other machines are read, and only a file that passes
    /// every check and holds changes takes one of those places: files that are empty,
    /// damaged, hostile or misnamed are set aside (or, valid and empty, skipped) without
    /// taking one, so they cannot push a machine out. Machines already known (read before,
    /// or whose changes this machine adopted) come first, then the others by file name. A
    /// valid file left out for want of a place is read as soon as one is free (a machine's
    /// file left the folder), without waiting for it to change.
    ///
    /// - Parameters:
    ///   - ledger: this machine's ledger.
    ///   - now: this machine's clock, in milliseconds.
    public mutating func scan(into ledger: inout RoamingLedger, now: UInt64) -> [Event] {
        var events: [Event] = []
        let listing = folder.listing()
        let ownName = RoamingFolder.FileName(RoamingFolder.fileName(for: ledger.machine))
        // Machines whose files left are forgotten first: their places are free for this pass.
        let present = Set(listing.keys.compactMap { RoamingFolder.machine(ofFileName: $0.text) })
        for gone in ledger.remote.keys where !present.contains(gone) { ledger.forget(gone) }
        seen = seen.filter { listing[$0.key] != nil }
        setAside = setAside.filter { listing[$0.key] != nil }
        waitingForPlace = waitingForPlace.filter { listing[$0] != nil }
        // Which machines are known decides only when there are more files than places
        // (the adopted state can be large: it is not walked otherwise).
        var known = Set(ledger.remote.keys)
        if present.count - (present.contains(ledger.machine) ? 1 : 0) > limits.machines {
            for entry in ledger.adopted.values { known.insert(entry.stamp.machine) }
        }
        let order = listing.keys.filter { $0 != ownName }.map { name in
            (name: name, known: RoamingFolder.machine(ofFileName: name.text).map(known.contains) ?? false)
        }.sorted { $0.known != $1.known ? $0.known : $0.name < $1.name }
        for (name, _) in order {
            guard let fingerprint = listing[name] else { continue }
            let placeFree = ledger.remote.count < limits.machines
            if seen[name] == fingerprint && !(placeFree && waitingForPlace.contains(name)) { continue }
            seen[name] = fingerprint
            waitingForPlace.remove(name)
            guard let expected = RoamingFolder.machine(ofFileName: name.text) else {
                events.append(
                    setAside(name, reason: "its name is not a machine identity (32 hexadecimal digits) followed by \(RoamingFolder.suffix)", bytes: nil))
                continue
            }
            var bytes: [UInt8]?
            let file: RoamingFile
            do throws(RoamingError) {
                bytes = try folder.read(name.text, limit: limits.fileBytes)
                file = try RoamingFile.decode(bytes ?? [], limits: limits, now: now, checkValue: checkValue)
                guard file.kind == .changes, file.machine == expected else {
                    throw .corrupt("the file says it was written by \(file.machine), not by the machine its name gives")
                }
            } catch {
                // A file that left the folder meanwhile is forgotten at the next pass.
                if case .io = error, !folder.contains(name) { continue }
                events.append(setAside(name, reason: error.description, bytes: bytes))
                continue
            }
            setAside[name] = nil
            let isRead = ledger.remote[expected] != nil
            // A machine not read yet whose file holds nothing takes no place.
            if !isRead && file.entries.isEmpty { continue }
            guard isRead || ledger.remote.count < limits.machines else {
                waitingForPlace.insert(name)
                events.append(
                    setAside(
                        name, reason: "\(limits.machines) other machines' files are read already; this one is read when one of theirs leaves the folder",
                        bytes: nil, copy: false))
                continue
            }
            ledger.receive(file)
            events.append(.read(name, entries: file.entries.count))
        }
        return events
    }

    /// Sets a file aside, with a copy of `bytes` (read again when `nil`; a file too large
    /// to read, or one set aside only for want of a place, is set aside without a copy).
    private mutating func setAside(_ name: RoamingFolder.FileName, reason: String, bytes: [UInt8]?, copy keep: Bool = true) -> Event {
        var copy: String?
        if keep, let bytes = bytes ?? (try? folder.read(name.text, limit: limits.fileBytes)) { copy = keepCopy(name, bytes: bytes) }
        let entry = SetAside(reason: reason, copy: copy)
        setAside[name] = entry
        return .setAside(name, entry)
    }

    /// Keeps a copy of a file set aside, within the bounds; notes the older copies dropped
    /// for it (their files stay listed, without a copy).
    private mutating func keepCopy(_ name: RoamingFolder.FileName, bytes: [UInt8]) -> String? {
        let kept = folder.setAside(name, bytes: bytes, limits: limits)
        guard !kept.dropped.isEmpty else { return kept.copy }
        let gone = Set(kept.dropped.map { RoamingFolder.FileName($0) })
        for (name, entry) in setAside {
            if let copy = entry.copy, gone.contains(RoamingFolder.FileName(copy)) { setAside[name]?.copy = nil }
        }
        for (name, entry) in refused {
            if let copy = entry.copy, gone.contains(RoamingFolder.FileName(copy)) { refused[name]?.copy = nil }
        }
        return kept.copy
    }
}
