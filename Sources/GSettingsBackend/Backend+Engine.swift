import CGSettingsBackend

/// The engine driven over GDBus: its actions carried out as calls, and what comes from
/// the bus (answers and signals) fed back to it.
extension Backend {
    // MARK: Driving the engine

    /// Carries out the engine's actions (lock held), until it asks for nothing more.
    func run() {
        changeCount &+= 1
        while true {
            let actions = engine.takeActions()
            if actions.isEmpty { return }
            for action in actions { perform(action) }
        }
    }

    func perform(_ action: ClientAction<WireValue>) {
        switch action {
        case .subscribe(let domain):
            if names.subscribesAtDoor {
                let message = Messages.call(names, interface: SandboxBus.interface, SandboxBus.subscribeMethod, [Messages.strings([domain.name])])
                g_dbus_message_set_flags(message, G_DBUS_MESSAGE_FLAGS_NO_REPLY_EXPECTED)
                send(message)
            } else {
                send(Messages.busCall("AddMatch", names.rule(domain: domain.name)))
            }
        case .unsubscribe:
            break
        case .load(let domain, let token):
            // Behind the subscription, both at once: the load is one round trip.
            for (part, method) in [(ClientLoadPart.forcedKeys, PreferencesMethod.forcedKeys), (.values, .readDomain)] {
                let serial = send(Messages.call(names, method.rawValue, [g_variant_new_string(domain.name)]))
                if serial == 0 {
                    engine.loadCallFailed(domain, token: token, part: part, failure: nil, reason: "the call could not be sent")
                } else {
                    calls[serial] = .load(domain, token: token, part: part)
                }
            }
        case .flushNeeded(let domain):
            // At once, as dconf does: the writes made while this one is in flight merge.
            engine.flush(domain)
        case .apply(let domain, let set, let remove, let token):
            let serial = send(
                Messages.call(
                    names, PreferencesMethod.apply.rawValue,
                    [
                        g_variant_new_string(domain.name), Messages.dictionary(set), Messages.strings(remove),
                    ]))
            if serial == 0 {
                engine.writeFailed(domain, token: token, failure: nil, reason: "the call could not be sent")
            } else {
                calls[serial] = .write(domain, token: token)
            }
        case .replace(let domain, _, let token):
            engine.writeFailed(domain, token: token, failure: nil, reason: "the GSettings backend replaces no domain")
        case .loadFinished(let domain, let loaded):
            g_cond_broadcast(&lock.pointee.cond)
            if let snapshot = snapshots.removeValue(forKey: domain) { snapshotReplaced(snapshot, domain, loaded: loaded) }
            if answeredEarly.contains(domain) { news.paths.append(domain) }
            if !loaded {
                news.reports.append(
                    "prefsd: GSettings values of " + GSettingsPath.settingsPath(ofDomain: domain.name) + " are the schema defaults: prefsd could not be reached"
                )
            }
        case .changed(let domain, let keys, let byWrite):
            // The backend's own writes are told with GSettings' origin tag, by `write`.
            if !byWrite { news.keys.append((domain, keys)) }
        case .forcedChanged(let domain, let keys):
            news.writable.append((domain, keys))
        case .writeFailed(let domain, _, let reason):
            news.reports.append("prefsd: a GSettings change under " + GSettingsPath.settingsPath(ofDomain: domain.name) + " was not saved: " + reason)
        case .writesSettled:
            g_cond_broadcast(&lock.pointee.cond)
        case .writeEnded:
            // GSettings waits for no single write: failures are reported by `writeFailed`.
            break
        }
    }

    // MARK: What comes from the bus

    static let filterFunction: GDBusMessageFilterFunction = { _, message, incoming, context in
        guard incoming != 0, let message, let context else { return message }
        let backend = Unmanaged<Backend>.fromOpaque(context).takeUnretainedValue()
        if backend.received(message) {
            g_object_unref(UnsafeMutableRawPointer(message))
            return nil
        }
        return message
    }

    static let releaseFunction: GDestroyNotify = { context in
        guard let context else { return }
        Unmanaged<Backend>.fromOpaque(context).release()
    }

    /// Handles a message from the bus (GDBus's worker thread); returns whether it was an
    /// answer to the backend's own call (consumed).
    func received(_ message: OpaquePointer) -> Bool {
        let type = g_dbus_message_get_message_type(message)
        switch type {
        case G_DBUS_MESSAGE_TYPE_METHOD_RETURN, G_DBUS_MESSAGE_TYPE_ERROR:
            let replySerial = g_dbus_message_get_reply_serial(message)
            return locked {
                guard let call = calls.removeValue(forKey: replySerial) else { return false }
                answered(call, message, isError: type == G_DBUS_MESSAGE_TYPE_ERROR)
                run()
                return true
            }
        case G_DBUS_MESSAGE_TYPE_SIGNAL:
            guard let sender = g_dbus_message_get_sender(message), let member = g_dbus_message_get_member(message) else { return false }
            let from = String(cString: sender)
            let name = String(cString: member)
            if from == "org.freedesktop.DBus" {
                guard name == "NameOwnerChanged", Messages.string(message, 0) == names.busName else { return false }
                let owner = Messages.string(message, 2) ?? ""
                locked {
                    engine.ownerChanged(to: owner.isEmpty ? nil : owner)
                    run()
                }
                return false
            }
            guard let interface = g_dbus_message_get_interface(message), String(cString: interface) == PreferencesBus.interface,
                let domainName = Messages.string(message, 0)
            else { return false }
            let serial = g_dbus_message_get_serial(message)
            let domain = ClientDomain(domainName)
            if name == PreferencesBus.changedSignal {
                let changed = Messages.values(message, 1)
                let removed = Messages.stringList(message, 2)
                let invalidated = Messages.stringList(message, 3)
                locked {
                    engine.changed(domain, changed: changed, removed: removed, invalidated: invalidated, serial: serial, sender: from)
                    run()
                }
            } else if name == PreferencesBus.forcedKeysChangedSignal {
                let keys = Messages.stringList(message, 1)
                locked {
                    engine.forcedKeysChanged(domain, keys: Set(keys), serial: serial, sender: from)
                    run()
                }
            }
            return false
        default:
            return false
        }
    }

    /// An answer to one of the backend's calls (lock held), fed to the engine, which
    /// pairs a load's answers and decides what a refusal means.
    func answered(_ call: Call, _ message: OpaquePointer, isError: Bool) {
        let serial = g_dbus_message_get_serial(message)
        let sender = g_dbus_message_get_sender(message).map { String(cString: $0) }
        let failure = isError ? PreferencesFailure(errorName: g_dbus_message_get_error_name(message).map { String(cString: $0) } ?? "") : nil
        switch call {
        case .load(let domain, let token, let part):
            if let failure {
                engine.loadCallFailed(domain, token: token, part: part, failure: failure, reason: Messages.errorText(message), sender: sender)
            } else if part == .forcedKeys {
                engine.forcedKeysRead(domain, token: token, keys: Set(Messages.stringList(message, 0)), serial: serial)
            } else {
                engine.domainRead(domain, token: token, values: Messages.values(message, 0), serial: serial, sender: sender)
            }
        case .write(let domain, let token):
            if let failure {
                engine.writeFailed(domain, token: token, failure: failure, reason: Messages.errorText(message))
            } else {
                engine.writeAnswered(domain, token: token, serial: serial, sender: sender)
            }
        }
    }
}
