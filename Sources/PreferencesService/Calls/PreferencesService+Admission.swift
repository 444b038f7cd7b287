import DBus
import Dconf
import Dispatch
import Logging
import PreferencesModel
import PreferencesProtocol
import PreferencesStore
import Synchronization

/// How a call reaches its handler: held while the store loads (within bounds), then admitted
/// once its sender is known, and routed to the door, dconf's front, xfconf's, the standard
/// interfaces or the preferences interface.
extension PreferencesService {
    func receive(_ call: DBusMessage) {
        if state.withLock({ $0.ready }) { return dispatch(call) }
        // The store is loading: hold the call, within the bounds (measured outside the lock).
        let size = DBusValue.structure(call.body).marshalledSize
        let limits = configuration.limits
        enum Admission {
            case dispatch, held
            case refused(calls: Int, bytes: Int)
        }
        let admission = state.withLock { state -> Admission in
            if state.ready { return .dispatch }
            if state.readsServed, !state.draining, state.waiting.isEmpty, Self.readsSingleDomains(call) { return .dispatch }
            guard state.waiting.count < limits.waitingCalls, state.waitingBytes + size <= limits.waitingBytes else {
                return .refused(calls: state.waiting.count, bytes: state.waitingBytes)
            }
            // Without its libdbus message, which libdbus would count as unread (see
            // `DBusMessage.detached()`).
            state.waiting.append((call.detached(), size))
            state.waitingBytes += size
            return .held
        }
        switch admission {
        case .dispatch:
            dispatch(call)
        case .held:
            break
        case .refused(let calls, let bytes):
            reply(
                to: call, error: StandardErrorName.limitsExceeded,
                "prefsd is still loading its store and holds \(calls) calls (\(bytes) bytes) until then; this one (\(size) bytes) would pass the most it holds, \(limits.waitingCalls) calls or \(limits.waitingBytes) bytes (prefsd --max-waiting-calls, --max-waiting-size): try again once it has loaded"
            )
        }
    }

    func dispatch(_ call: DBusMessage) {
        if let refusal = gate.admit(call, then: { [self] call, caller in dispatch(call, as: caller) }) {
            reply(to: call, error: StandardErrorName.limitsExceeded, refusal)
        }
    }

    func dispatch(_ call: DBusMessage, as caller: CallerIdentity) {
        note(caller)
        if let door, door.serves(call), let answer = door.answer(call, from: caller) {
            guard !call.noReplyExpected else { return }
            return send(answer, over: door.connection)
        }
        if isDconfCall(call) { return handleDconfCall(call, as: caller) }
        if isXfconfCall(call) { return handleXfconfCall(call, as: caller) }
        if let answer = standardInterfaces.answer(call) {
            guard !call.noReplyExpected else { return }
            return send(answer)
        }
        switch call.interface {
        case nil, PreferencesBus.interface?:
            handlePreferencesCall(call, as: caller)
        case let other?:
            reply(to: call, error: StandardErrorName.unknownInterface, "the object \(PreferencesBus.objectPath) has no interface \(other)")
        }
    }
}
