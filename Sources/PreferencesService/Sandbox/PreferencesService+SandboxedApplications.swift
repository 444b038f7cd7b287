/// The sandboxed applications prefsd serves, remembered across restarts (see
/// `SandboxedApplications.swift`): the first call of an application puts it on the list,
/// and its domains leave dconf's file.
extension PreferencesService {
    /// Puts the application of a sandboxed `caller` on the list of those prefsd has
    /// served, the first time it calls; its domains' keys then leave dconf's file.
    func note(_ caller: CallerIdentity) {
        guard case .application(let application) = caller else { return }
        switch applications.note(application) {
        case .known:
            return
        case .full:
            logger.warning(
                "the list of sandboxed applications is full; dconf's file keeps showing this application's domains",
                metadata: ["application": "\(application)", "most": "\(SandboxedApplications.maximumCount)", "file": "\(applications.path)"])
            return
        case .added(let failure):
            if let failure {
                logger.error(
                    "a sandboxed application could not be added to the list kept beside the store; after a restart, dconf's file shows its domains until it calls again",
                    metadata: ["application": "\(application)", "error": "\(failure)"])
            } else {
                logger.info("serving a sandboxed application for the first time", metadata: ["application": "\(application)"])
            }
        }
        guard let dconf else { return }
        let touched =
            withDomains { domains in
                domains.committed.filter { DomainState.domain($0.key, belongsTo: application) }.mapValues { Array($0.keys) }
            } ?? [:]
        dconf.keepOut(touched)
    }
}
