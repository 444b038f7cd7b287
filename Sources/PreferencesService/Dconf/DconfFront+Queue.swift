import Dconf
import Dispatch
import PreferencesModel

/// The mirror queue's work: taking jobs into the mirror, writing dconf's file, and answering
/// and telling the jobs once the file holds them.
extension DconfFront {
    /// What the queue does next.
    private enum Step {
        /// Nothing is waiting.
        case done
        /// Native writes alone are waiting, within the pause after the last rewrite.
        case wait(until: DispatchTime)
        /// These jobs, with the types at their time.
        case run([Job], [DomainName: [String: String]])
    }

    /// Runs on the queue: every waiting job, one file write for all of them; with `pausing`,
    /// jobs that answer no `Change` wait for the pause after the last rewrite.
    func drain(pausing: Bool = true) {
        while true {
            let step = state.withLock { state -> Step in
                if state.pending.isEmpty {
                    state.draining = false
                    return .done
                }
                if pausing, let last = state.lastWrite, case let due = last + Self.nativePause(after: state.lastWriteTook),
                    DispatchTime.now() < due, !state.pending.contains(where: { $0.answer != nil })
                {
                    state.waiting = true
                    return .wait(until: due)
                }
                state.waiting = false
                defer { state.pending = [] }
                return .run(state.pending, state.types)
            }
            let jobs: [Job]
            let types: [DomainName: [String: String]]
            switch step {
            case .done:
                return
            case .wait(let due):
                queue.asyncAfter(deadline: due) { [self] in drain() }
                return
            case .run(let taken, let takenTypes):
                (jobs, types) = (taken, takenTypes)
            }
            // Jobs come only once the front has started (calls and commits wait for the store).
            guard let service = service.withLock({ $0 }) else {
                state.withLock { $0.draining = false }
                for job in jobs { discard(job.aside) }
                return
            }
            var current = takeMirror()
            var fileChanged = false
            for job in jobs {
                var paths: [String] = []
                for (domain, keys) in job.touched {
                    let stored = service.storedValues(domain: domain, keys: keys)
                    let shown = !keepsOut(domain)
                    for key in keys {
                        guard let path = DconfMirror.path(domain: domain, key: key) else { continue }
                        let new = shown ? (stored[key] ?? nil).flatMap { DconfValue(storedValue: $0, writtenAs: types[domain]?[key]) } : nil
                        guard current.database.values[path] != new else { continue }
                        set(path, to: new, in: &current.database)
                        paths.append(path)
                    }
                }
                // A directory reset is told as the directory, as dconf-service tells it.
                let reset = job.directories.filter { directory in paths.contains { $0.hasPrefix(directory) } }
                paths.removeAll { path in reset.contains { path.hasPrefix($0) } }
                current.held.append((job, paths + reset))
                fileChanged = fileChanged || !paths.isEmpty || !reset.isEmpty
            }
            // The newest `Change`'s file aside is renamed in (written again first when it
            // differs); the others are not needed.
            let asides = jobs.compactMap(\.aside)
            for aside in asides.dropLast() { DconfFiles.discard(aside) }
            if fileChanged || current.behind {
                write(&current, through: asides.last, reason: "change")
            } else {
                discard(asides.last)
            }
            release(current)
        }
    }

    /// Runs on the queue: when the file is behind the mirror, writes it, and answers and
    /// tells the jobs that waited for it.
    func catchUp() {
        var current = takeMirror()
        if current.behind { write(&current, through: nil, reason: "retry") }
        release(current)
    }

    /// Runs on the queue: the file as it will be once `values` (by dconf key; `nil`: reset)
    /// are committed, written aside; `nil` when they change nothing in it and it holds
    /// every change before (a file behind its mirror is written aside all the same).
    func writeAside(_ values: [String: DconfValue?]) throws(DconfError) -> DconfAside? {
        var current = takeMirror()
        defer { release(current) }
        // The values the change replaces, to put back once the file is laid out.
        var replaced: [(path: String, value: DconfValue?)] = []
        for (path, value) in values where current.database.values[path] != value {
            replaced.append((path, current.database.values[path]))
            set(path, to: value, in: &current.database)
        }
        guard !replaced.isEmpty || current.behind else { return nil }
        let laidOut = Result { () throws(DconfError) -> [UInt8] in try layOut(current.database) }
        for (path, value) in replaced.reversed() { try? current.database.set(path, to: value) }
        do {
            return try files.writeAside(try laidOut.get())
        } catch {
            noteFailure(error, when: "Change", in: &current)
            throw error
        }
    }

    /// The mirror's state, taken out of its mutex while the queue changes it, so that
    /// changing it copies nothing (``release(_:)`` puts it back).
    private func takeMirror() -> Mirror {
        mirror.withLock { mirror in
            defer { mirror = Mirror() }
            return mirror
        }
    }

    /// Puts `current` back as the mirror's state and, when the file holds it, answers and
    /// tells the jobs held for it, in order; while it cannot be written, the jobs that
    /// change nothing are refused.
    private func release(_ current: Mirror) {
        var current = current
        let ready = current.behind ? [] : current.held
        if !current.behind { current.held = [] }
        let refused = current.behind ? current.held.compactMap(\.job.refuse) : []
        if !refused.isEmpty { current.held.removeAll { $0.job.refuse != nil } }
        let reason = current.failure ?? "it cannot be written"
        mirror.withLock { $0 = current }
        for refuse in refused { refuse(reason) }
        guard !ready.isEmpty, let service = service.withLock({ $0 }) else { return }
        for (job, paths) in ready {
            job.answer?()
            if let notification = DconfNotification(paths: paths) { service.notify(notification, tag: job.tag) }
        }
    }

    /// Sets `path` to `value` in `database`; a value GVDB cannot store is left out of the
    /// file, and logged.
    func set(_ path: String, to value: DconfValue?, in database: inout DconfMirrorDatabase) {
        do {
            try database.set(path, to: value)
        } catch {
            logger.error(
                "a value cannot be stored in dconf's database file; dconf's clients do not see it",
                metadata: ["key": "\(path)", "error": "\(error)"])
        }
    }

    /// The bytes of the file of `database`.
    private func layOut(_ database: DconfMirrorDatabase) throws(DconfError) -> [UInt8] {
        do {
            return try database.file()
        } catch {
            throw DconfError("cannot lay out \(files.databasePath): \(error)")
        }
    }

    /// Writes the file of `current`'s database (through `aside`, the newest `Change`'s file
    /// written aside, when given), then flags it; with `unlessOnDisk`, only when the file on
    /// disk differs. When it cannot be written, `current` is behind and a retry is scheduled.
    func write(_ current: inout Mirror, through aside: DconfAside?, reason: String, unlessOnDisk: Bool = false) {
        let started = DispatchTime.now()
        do {
            let bytes = try layOut(current.database)
            if unlessOnDisk, (try? files.readDatabase()) == bytes {
                discard(aside)
            } else {
                try install(bytes, through: aside)
                invalidate(&current)
            }
        } catch {
            current.behind = true
            noteFailure(error, when: reason, in: &current)
            scheduleRetry(&current)
            return
        }
        current.behind = false
        if let failure = current.failure {
            logger.notice(
                "dconf's database file is written again and holds every change", metadata: ["file": "\(files.databasePath)", "failedWith": "\(failure)"])
            current.failure = nil
        }
        let ended = DispatchTime.now()
        state.withLock { state in
            state.lastWrite = ended
            state.lastWriteTook = .nanoseconds(Int(clamping: ended.uptimeNanoseconds - min(started.uptimeNanoseconds, ended.uptimeNanoseconds)))
        }
    }

    /// Puts `bytes` in place of the database file: through `aside` when given (written
    /// again when it holds other bytes), else written aside afresh.
    private func install(_ bytes: [UInt8], through aside: DconfAside?) throws(DconfError) {
        guard var aside else { return try files.writeDatabase(bytes) }
        if aside.bytes != bytes {
            do {
                try aside.rewrite(with: bytes)
            } catch {
                DconfFiles.discard(aside)
                return try files.writeDatabase(bytes)
            }
        }
        try DconfFiles.install(aside, synced: false)
    }

    /// Flags the file for dconf's running clients; a refusal (something other than a regular
    /// file where the invalidation file goes) is logged once until it changes.
    private func invalidate(_ current: inout Mirror) {
        do {
            try files.invalidate()
            current.invalidationRefusal = nil
        } catch {
            guard current.invalidationRefusal != error.description else { return }
            current.invalidationRefusal = error.description
            logger.warning(
                "dconf's running clients were not told to reopen its database: \(error)", metadata: ["file": "\(files.invalidationPath)"])
        }
    }

    /// Logs `error`, met writing the file at `reason` (start, a change, a retry), when it
    /// starts a spell of failures to write the file.
    private func noteFailure(_ error: DconfError, when reason: String, in current: inout Mirror) {
        guard current.failure == nil else { return }
        current.failure = error.description
        logger.error(
            "dconf's database file cannot be written: dconf's Change calls are refused, and changes made through prefsd's own interface reach dconf's clients once it can be (tried again with each change and every second)",
            metadata: ["file": "\(files.databasePath)", "when": "\(reason)", "error": "\(error)"])
    }

    /// Schedules a retry of a file behind its mirror, unless one is.
    private func scheduleRetry(_ current: inout Mirror) {
        guard !current.retrying else { return }
        current.retrying = true
        queue.asyncAfter(deadline: .now() + Self.retryInterval) { [self] in
            mirror.withLock { $0.retrying = false }
            drain(pausing: false)
            catchUp()
        }
    }
}
