import ClientDriver
import PreferencesClient
import PreferencesModel
import PreferencesProxy

extension BusSession {
    /// Takes the driver's events (on whichever thread drains the engine: it must not block):
    /// changes prefsd told are passed on to the objects searching the domain, the outcome
    /// of writes to their callers. This process's own writes are told by the call that made
    /// them (see `write`), which knows the object they were made through.
    func receive(_ event: ClientDriverEvent, connection: UInt64) {
        switch event {
        case .changed(let domain, let keys, false) where !domain.isVolatile:
            notifyObjects(DomainName(known: domain.name), keys: keys, posting: true)
        case .forcedChanged(let domain, let keys) where !domain.isVolatile:
            notifyObjects(DomainName(known: domain.name), keys: keys, posting: false)
        case .changed, .forcedChanged, .loadFinished, .writeFailed:
            generation.add(1, ordering: .releasing)
        case .writeEnded(_, let tickets, let failure):
            ended(tickets, connection: connection, failure: failure)
        case .writesSettled:
            wakeWriteWaiters()
        }
    }
}

extension DomainName {
    /// The name of a domain the engine follows: one this library validated before following it.
    init(known name: String) {
        self = (try? DomainName(name)) ?? .global
    }
}
