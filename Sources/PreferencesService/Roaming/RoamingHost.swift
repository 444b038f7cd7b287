import PreferencesModel
import PreferencesRoaming

/// What the roaming coordinator needs of the service: a snapshot of the roaming domains,
/// a way to commit other machines' changes, and a place to show its status.
protocol RoamingHost: AnyObject, Sendable {
    /// The selection (the domain `io.github.prefsd.Roaming` as readers see it), then the
    /// committed value of every key of the selected domains and which keys are forced.
    func roamingSnapshot() -> RoamingSnapshot
    /// Commits other machines' changes of one domain as one change recorded with `who`,
    /// only if the keys still hold the values of the snapshot; calls `completion` once the
    /// commit is durable (or was declined or failed).
    func applyRoaming(_ request: RoamingApplyRequest, completion: @escaping @Sendable (RoamingApplyOutcome) -> Void)
    /// Shows the status in the volatile domain `io.github.prefsd.Roaming.Status`.
    func showRoamingStatus(_ values: [String: PropertyListValue])
}

/// What the store holds of the roaming domains at one moment.
struct RoamingSnapshot: Sendable {
    /// What roams.
    var selection: RoamingSelection
    /// Why parts of the selection were ignored.
    var problems: [String]
    /// The committed value of every key of the selected domains.
    var local: [RoamingKey: PropertyListValue]
    /// The forced keys of the selected domains.
    var forced: Set<RoamingKey>
}

/// Other machines' changes of one domain to commit.
struct RoamingApplyRequest: Sendable {
    var domain: DomainName
    /// Keys expected to hold these values (as in the snapshot)…
    var expected: [String: PropertyListValue]
    /// …and keys expected absent.
    var absent: [String]
    var set: [String: PropertyListValue]
    var remove: [String]
    /// The history's who: `roaming:<machine name>`.
    var who: String
}

/// How an apply ended.
enum RoamingApplyOutcome: Sendable, Equatable {
    /// Committed (or nothing needed committing).
    case applied
    /// A key changed since the snapshot: plan again.
    case declined
    /// Refused (a quota, a forced key) or the store failed: the message says why.
    case failed(String)
}
