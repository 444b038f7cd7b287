import DBus
import Dconf
import Dispatch
import Logging
import PreferencesModel
import PreferencesProtocol
import PreferencesStore
import Synchronization

/// Replies and signals, each bounded by what the bus carries.
extension PreferencesService {

    /// Answers `call` with `body`, or with `org.freedesktop.DBus.Error.LimitsExceeded` when
    /// the body would pass ``ServiceLimits/replyBytes`` or libdbus cannot send it: a caller
    /// is never left waiting for an answer that cannot come.
    func reply(to call: DBusMessage, _ body: [DBusValue]) {
        guard !call.noReplyExpected else { return }
        let size = DBusValue.structure(body).marshalledSize
        let limit = configuration.limits.replyBytes
        guard size <= limit else {
            logger.warning("a reply too large for the bus was refused", metadata: ["member": "\(call.member ?? "")", "bytes": "\(size)"])
            return reply(
                to: call, error: StandardErrorName.limitsExceeded,
                "the answer would take \(size) bytes, over the \(limit) a message may take on this bus (prefsd --max-reply-size); read it in parts (Read of single keys) or remove data"
            )
        }
        do {
            try connection(answering: call).send(call.makeReturn(body))
        } catch {
            logger.error("could not send a reply", metadata: ["member": "\(call.member ?? "")", "error": "\(error)"])
            reply(to: call, error: StandardErrorName.limitsExceeded, "the answer could not be sent on the bus: \(error)")
        }
    }

    /// Answers `call` with `body`, encoded already, as ``reply(to:_:)-([DBusValue])`` does.
    func reply(to call: DBusMessage, _ body: ReplyBody) {
        guard !call.noReplyExpected else { return }
        guard body.marshalledSize <= configuration.limits.replyBytes else { return reply(to: call, body.values) }
        do {
            try connection(answering: call).reply(to: call, with: body)
        } catch {
            // Reported, and answered otherwise, the way a reply built from values is.
            reply(to: call, body.values)
        }
    }

    func reply(to call: DBusMessage, error name: String, _ message: String) {
        guard !call.noReplyExpected else { return }
        send(call.makeError(name: name, message: message), over: connection(answering: call))
    }

    /// Sends a signal, unless it is too large for the bus (it is logged instead: sending
    /// it would get prefsd disconnected); `encoded`, when given, is `signal` encoded already.
    func emitSignal(_ signal: DBusMessage, encoded: EncodedMessage? = nil) {
        // The one place every change to what a domain reads becomes visible (its signal goes
        // out before its reply): the domain's snapshot goes stale here, first.
        if let snapshots, signal.member == PreferencesBus.changedSignal || signal.member == PreferencesBus.forcedKeysChangedSignal,
            case .string(let domain)? = signal.body.first
        {
            snapshots.invalidate(domain)
        }
        guard fitsOnBus(signal) else { return }
        if let encoded {
            do { try connection.send(encoded) } catch { send(signal) }
        } else {
            send(signal)
        }
        door?.forward(signal)
    }

    /// Whether `signal`'s body is within the bound on replies; a signal past it is logged,
    /// not sent (sending it would get prefsd disconnected).
    func fitsOnBus(_ signal: DBusMessage) -> Bool {
        let size = DBusValue.structure(signal.body).marshalledSize
        guard size <= configuration.limits.replyBytes else {
            logger.error("a signal too large for the bus was not sent", metadata: ["member": "\(signal.member ?? "")", "bytes": "\(size)"])
            return false
        }
        return true
    }

    func send(_ message: DBusMessage, over connection: (any ServiceConnection)? = nil) {
        do {
            try (connection ?? self.connection).send(message)
        } catch {
            logger.error("could not send a message", metadata: ["member": "\(message.member ?? message.errorName ?? "reply")", "error": "\(error)"])
        }
    }
}
