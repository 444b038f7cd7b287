import PreferencesModel
import PreferencesRoaming
import PreferencesStore

/// The service's side of roaming: snapshots of the roaming domains, other machines'
/// changes committed like any other change, and the status domain.
extension PreferencesService: RoamingHost {
    /// Starts the roaming coordinator, when the configuration has a roaming folder.
    func startRoaming() {
        guard let settings = configuration.roaming else { return }
        let limits = configuration.limits
        guard
            let coordinator = RoamingCoordinator(
                configuration: settings, host: self, logger: logger,
                checkValue: { value, subject in
                    try limits.check(value, subject: subject)
                })
        else { return }
        roaming.withLock { $0 = coordinator }
        logger.info("roaming", metadata: ["folder": "\(settings.directory.path)", "machine": "\(coordinator.machine)"])
        coordinator.start()
    }

    /// Stops the coordinator, after the pass under way.
    func stopRoaming() {
        let coordinator = roaming.withLock { coordinator in
            defer { coordinator = nil }; return coordinator
        }
        coordinator?.stop()
    }

    func roamingSnapshot() -> RoamingSnapshot {
        state.withLock { state in
            guard let domains = state.domains else {
                return RoamingSnapshot(selection: RoamingSelection(), problems: [], local: [:], forced: [])
            }
            var problems: [String] = []
            let selection = RoamingSelection(entries: domains.entries(domain: RoamingSelection.domain) ?? [:], problems: &problems)
            var local: [RoamingKey: PropertyListValue] = [:]
            var forced: Set<RoamingKey> = []
            for domain in selection.domains {
                for (key, value) in domains.committed[domain] ?? [:] where selection.roams(domain, key) {
                    local[RoamingKey(domain, key)] = value
                }
                // Forced by a managed domain or locked in a dconf system database.
                for key in domains.forcedKeys(domain: domain) { forced.insert(RoamingKey(domain, key)) }
            }
            return RoamingSnapshot(selection: selection, problems: problems, local: local, forced: forced)
        }
    }

    func applyRoaming(_ request: RoamingApplyRequest, completion: @escaping @Sendable (RoamingApplyOutcome) -> Void) {
        let staged: (Effect, DomainStore)?
        let schemas = schemas.current
        do {
            staged = try state.withLock { state -> (Effect, DomainStore)? in
                guard state.domains != nil, let store = state.store else { return nil }
                // Another machine's value is taken even where this machine's schema does
                // not take it: a schema never stops a domain from roaming.
                state.domains!.schemaTyping = .fitted(schemas)
                defer { state.domains!.schemaTyping = .asGiven }
                // Judged on the user's own values (committed and staged), as the plan was:
                // an administrator's default neither roams nor stands in for a user's value.
                let domains = state.domains!
                let holds =
                    request.expected.allSatisfy { domains.projected(domain: request.domain, key: $0.key) == $0.value }
                    && request.absent.allSatisfy { domains.projected(domain: request.domain, key: $0) == nil }
                guard holds else { return nil }
                return (try state.domains!.apply(domain: request.domain, set: request.set, remove: request.remove), store)
            }
        } catch {
            return completion(.failed("\(error)"))
        }
        guard let (effect, store) = staged else { return completion(.declined) }
        switch effect {
        case .unchanged, .volatile:
            completion(.applied)
        case .persistent(let batch):
            // Told to every reader but the roaming folder: it is the other machine's change,
            // adopted by the pass that applies it.
            commit([batch], store: store, who: request.who, origin: .roaming) { result in
                switch result {
                case .success: completion(.applied)
                case .failure(let error): completion(.failed("the store could not save the change: \(error)"))
                }
            }
        }
    }

    func showRoamingStatus(_ values: [String: PropertyListValue]) {
        let domain = RoamingCoordinator.statusDomain
        let change = state.withLock { state -> Change? in
            guard state.domains != nil else { return nil }
            let old = state.domains!.volatile[domain] ?? [:]
            _ = state.domains!.removeVolatileDomain(domain)
            do {
                _ = try state.domains!.setVolatileDomain(domain, values: values)
            } catch {
                return nil
            }
            var change = Change(domain: domain)
            for (key, value) in values where old[key] != value { change.changed[key] = value }
            change.removed = old.keys.filter { values[$0] == nil }.sorted()
            return change.isEmpty ? nil : change
        }
        if let change { emit(change, volatile: true) }
    }
}
