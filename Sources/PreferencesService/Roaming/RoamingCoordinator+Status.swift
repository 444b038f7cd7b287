import PreferencesModel
import PreferencesRoaming

/// What the coordinator shows in its status domain, `io.github.prefsd.Roaming.Status`.
extension RoamingCoordinator {
    // MARK: Status

    func showStatus(host: any RoamingHost, selection: RoamingSelection) {
        let values = state.withLock { state -> [String: PropertyListValue]? in
            var values: [String: PropertyListValue] = [
                "Machine": .string(state.ledger.machine.rawValue),
                "MachineName": .string(state.ledger.name),
                "Folder": .string(folder.directory.path),
                "Domains": .array(selection.domains.sorted().map { .string($0.rawValue) }),
                "Published": .integer(Int64(state.ledger.log.count)),
            ]
            values["Machines"] = .array(
                state.ledger.remote.sorted { $0.key < $1.key }.map { machine, known in
                    .dictionary([
                        "Machine": .string(machine.rawValue), "Name": .string(known.name),
                        "LastChange": .date(secondsSince1970: Double(known.newest.wall) / 1000),
                        "Keys": .integer(Int64(known.latest.count)),
                    ])
                })
            values["Waiting"] = .array(
                state.waiting.sorted { $0.key < $1.key }.map { key, problem in
                    .dictionary([
                        "Domain": .string(key.domain.rawValue), "Key": .string(key.key),
                        "Machine": .string(problem.machine), "Reason": .string(problem.reason),
                    ])
                })
            // This machine's own files refused at start first, then the other machines'.
            values["SetAside"] = .array(
                (state.reader.refused.sorted { $0.key < $1.key } + state.reader.setAside.sorted { $0.key < $1.key }).map { name, problem in
                    var entry: [String: PropertyListValue] = ["File": .string(name.text), "Reason": .string(problem.reason)]
                    if let copy = problem.copy { entry["Copy"] = .string(copy) }
                    return .dictionary(entry)
                })
            var problems = state.selectionProblems
            if let own = state.ownProblem { problems.append(own) }
            values["Problems"] = .array(problems.map { .string($0) })
            guard values != state.status else { return nil }
            state.status = values
            return values
        }
        if let values { host.showRoamingStatus(values) }
    }
}
