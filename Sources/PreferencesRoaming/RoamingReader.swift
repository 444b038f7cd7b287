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
    /// Valid files not read because `limits.machines` others are: read once a place is free.
    public private(set) var waitingForPlace: Set<RoamingFolder.FileName> = []

    /// Makes a reader; nothing is read until ``load(machine:name:now:)``.
    public init(folder: RoamingFolder, limits: RoamingLimits, checkValue: @escaping @Sendable (PropertyListValue, String) throws -> Void) {
        self.folder = folder
        self.limits = limits
        self.checkValue = checkValue
    }

    /// The ledger of `machine`, started from its file in the folder and its adopted state
    /// (either may be missing; one that is unreadable is left out).
    public mutating func load(machine: MachineID, name: String, now: UInt64) -> (ledger: RoamingLedger, events: [Event]) {
        var events: [Event] = []
        var own: RoamingFile?
        let ownName = RoamingFolder.fileName(for: machine)
        let ownURL = folder.directory.appendingPathComponent(ownName)
        do throws(RoamingError) {
            if let bytes = try RoamingFolder.readIfPresent(ownURL, limit: limits.fileBytes) {
                own = try RoamingFile.decode(bytes, limits: limits, now: UInt64.max - limits.futureSkewMilliseconds, checkValue: checkValue)
            }
        } catch {
            events.append(
                .refused(RoamingFolder.FileName(ownName), SetAside(reason: "this machine's file is unreadable; starting it anew: \(error)", copy: nil)))
        }
        var adopted: RoamingFile?
        var big = limits
        big.fileBytes *= 8
        big.entries *= 8
        do throws(RoamingError) {
            if let bytes = try RoamingFolder.readIfPresent(folder.adoptedURL, limit: big.fileBytes) {
                adopted = try RoamingFile.decode(bytes, limits: big, now: UInt64.max - big.futureSkewMilliseconds, checkValue: checkValue)
            }
        } catch {
            events.append(
                .refused(
                    RoamingFolder.FileName(folder.adoptedURL.lastPathComponent),
                    SetAside(reason: "the adopted state is unreadable; other machines' changes are compared anew: \(error)", copy: nil)))
        }
        return (RoamingLedger(machine: machine, name: own?.name ?? name, own: own, adopted: adopted), events)
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
        var known = Set(ledger.remote.keys)
        for entry in ledger.adopted.values { known.insert(entry.stamp.machine) }
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
        if keep, let bytes = bytes ?? (try? folder.read(name.text, limit: limits.fileBytes)) {
            let kept = folder.setAside(name, bytes: bytes, limits: limits)
            forgetCopies(kept.dropped)
            copy = kept.copy
        }
        let entry = SetAside(reason: reason, copy: copy)
        setAside[name] = entry
        return .setAside(name, entry)
    }

    /// Notes that these copies were dropped (the files stay set aside, without a copy).
    private mutating func forgetCopies(_ paths: [String]) {
        guard !paths.isEmpty else { return }
        let gone = Set(paths.map { RoamingFolder.FileName($0) })
        for (name, entry) in setAside {
            if let copy = entry.copy, gone.contains(RoamingFolder.FileName(copy)) { setAside[name]?.copy = nil }
        }
    }
}
