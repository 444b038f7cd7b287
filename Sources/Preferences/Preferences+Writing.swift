import Foundation
import PreferencesClient
import PreferencesModel
import PreferencesProtocol

extension Preferences {
    /// Sets a property-list value in this object's domain.
    ///
    /// The value shows at once in this process; it reaches prefsd and the disk in the
    /// background, merged with the other writes of the domain made while one is in flight
    /// (so a key set thousands of times a second costs a few commits). A refused write (a forced key, a quota, no service) is taken back, so
    /// the previous value shows again, and `synchronize()` returns false. Use
    /// `write(_:forKey:)` to learn the outcome of one write.
    public func set(_ value: PropertyListValue, forKey key: String) {
        send(value, forKey: key, completion: nil)
    }

    /// Sets Foundation objects (`String`, numbers, `Bool`, `Data`, `Date`, `URL`, arrays
    /// and dictionaries of them), as `UserDefaults.set(_:forKey:)`; `nil` removes the key.
    /// An object that is not a property list is not stored, and `synchronize()` returns false.
    public func set(_ value: Any?, forKey key: String) {
        guard let value else { return removeObject(forKey: key) }
        do {
            set(try PropertyListValue(foundation: value), forKey: key)
        } catch {
            session.recordRefusal(PreferencesError(error))
        }
    }

    /// Sets an integer.
    public func set(_ value: Int, forKey key: String) { set(.integer(Int64(value)), forKey: key) }
    /// Sets a double.
    public func set(_ value: Double, forKey key: String) { set(.real(value), forKey: key) }
    /// Sets a float, stored as the real its shortest decimal text spells, as a property list
    /// stores a float: `set(Float(12.34), forKey:)` reads back as `"12.34"` in every process.
    public func set(_ value: Float, forKey key: String) { set(.real(float: value), forKey: key) }
    /// Sets a boolean.
    public func set(_ value: Bool, forKey key: String) { set(.boolean(value), forKey: key) }
    /// Sets a URL, stored as its absolute string (read it back with `url(forKey:)`).
    public func set(_ url: URL?, forKey key: String) {
        guard let url else { return removeObject(forKey: key) }
        set(.string(url.isFileURL ? url.path : url.absoluteString), forKey: key)
    }

    /// Removes a key from this object's domain.
    public func removeObject(forKey key: String) {
        send(nil, forKey: key, completion: nil)
    }

    /// Sets a value and waits until prefsd has it on disk.
    /// - Throws: `PreferencesError` saying why it was refused; the previous value shows again.
    public func write(_ value: PropertyListValue, forKey key: String) async throws(PreferencesError) {
        try await awaitWrite(value, forKey: key)
    }

    /// Removes a key and waits until the removal is on disk.
    /// - Throws: `PreferencesError` saying why it was refused.
    public func remove(forKey key: String) async throws(PreferencesError) {
        try await awaitWrite(nil, forKey: key)
    }

    private func awaitWrite(_ value: PropertyListValue?, forKey key: String) async throws(PreferencesError) {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, PreferencesError>, Never>) in
            send(value, forKey: key) { continuation.resume(returning: $0) }
        }
        try result.get()
    }

    private func send(_ value: PropertyListValue?, forKey key: String, completion: BusSession.Completion?) {
        if let problem = PreferenceKey.problem(with: key) {
            let error = PreferencesError(.invalidName("invalid key \"\(key.prefix(80))\": \(problem)"))
            session.recordRefusal(error)
            completion?(.failure(error))
            return
        }
        // Loaded first (the engine writes only over what it knows), so a forced key is known.
        let clientDomain = ClientDomain(domain.rawValue)
        session.ensureLoaded([clientDomain])
        if session.currentDriver?.isForced(PreferenceKey.normalized(key), in: clientDomain) == true {
            let error = PreferencesError(.forced("\(domainName) \"\(key)\" is forced by the administrator's managed preferences and cannot be changed"))
            session.recordRefusal(error)
            completion?(.failure(error))
            return
        }
        session.write(value, key: PreferenceKey.normalized(key), domain: domain, origin: self, completion: completion)
    }

    /// Adds values to the registration domain: the fallbacks used when no other domain
    /// has a key. They belong to this object and are never sent to prefsd.
    public func register(defaults: [String: Any]) {
        var added: [String: PropertyListValue] = [:]
        for (key, object) in defaults {
            do { added[key] = try PropertyListValue(foundation: object) } catch { session.recordRefusal(PreferencesError(error)) }
        }
        changeLayers(keys: Set(added.keys), notify: false) { $0.registration.merge(added) { _, new in new } }
    }

    /// Adds a domain to the search list, after the application domain and the suites
    /// added before it (as `UserDefaults.addSuite(named:)`).
    public func addSuite(named suiteName: String) {
        guard let suite = try? DomainName(suiteName) else { return }
        let keys = Set(session.entries(of: ClientDomain(suite.rawValue)).map { Array($0.keys) } ?? [])
        changeLayers(keys: keys, notify: true) { $0.searchList.addSuite(suite) }
    }

    /// Removes a suite from the search list.
    public func removeSuite(named suiteName: String) {
        guard let suite = try? DomainName(suiteName) else { return }
        let keys = Set(session.currentDriver.map { Array($0.entries(of: ClientDomain(suite.rawValue)).keys) } ?? [])
        changeLayers(keys: keys, notify: true) { $0.searchList.removeSuite(suite) }
    }

    /// Changes this object's own layers and tells observers of the keys whose value changed;
    /// posts `didChangeNotification` when `notify` or when an effective value changed.
    func changeLayers(keys: Set<String>, notify: Bool, _ body: (inout Layers) -> Void) {
        let driver = session.currentDriver
        let keys = Array(keys)
        let changed = local.withLock { local -> Bool in
            let before = keys.map { local.layers.resolve($0, in: driver) }
            body(&local.layers)
            local.layersVersion += 1
            local.resolved.removeAll()
            return keys.indices.contains { local.layers.resolve(keys[$0], in: driver) != before[$0] }
        }
        // Observers and streams compare with what they were told last.
        if notify || changed { session.deliver { [self] in evaluate(keys, posting: true) } }
    }

    /// Saves and brings in, as `UserDefaults.synchronize()`: waits until every change this
    /// process made is answered (on disk when it succeeded), then makes one round trip to
    /// prefsd so that every change committed by any process before the call shows here.
    /// - Returns: false if any change since the last call was refused or could not be sent,
    ///   or prefsd could not be reached.
    @discardableResult
    public func synchronize() -> Bool {
        let failures = session.waitForWrites()
        let caughtUp = session.catchUp()
        return failures.isEmpty && caughtUp
    }
}
