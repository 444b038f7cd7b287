import DBus
import Synchronization

/// The `Changed` of a persistent write, encoded while the store commits it.
///
/// The connection's thread calls ``prepare(_:)`` right after handing the batch to the store's
/// writer, which on a machine with two cores runs beside it during the commit's sync; the
/// writer's completion calls ``take(for:)`` and gets the encoded signal only when it is
/// ready and of exactly the change the commit made (another batch committed first can make
/// the guess wrong). Otherwise the completion encodes the signal itself.
final class EarlySignal: Sendable {
    private enum State {
        case preparing
        case ready(Change, EncodedMessage)
        case taken
    }

    private let state = Mutex(State.preparing)

    /// Runs `encode` (the predicted change and its encoded signal, or nil) and keeps what it
    /// returns, unless the completion has come already.
    func prepare(_ encode: () -> (Change, EncodedMessage?)?) {
        guard case .preparing = state.withLock({ $0 }), let (change, encoded) = encode(), let encoded else { return }
        state.withLock { state in
            if case .preparing = state { state = .ready(change, encoded) }
        }
    }

    /// The encoded signal of `change`, if it was prepared and predicted exactly that change.
    func take(for change: Change) -> EncodedMessage? {
        let taken = state.withLock { state -> State in
            defer { state = .taken }
            return state
        }
        guard case .ready(let predicted, let encoded) = taken, predicted == change else { return nil }
        return encoded
    }
}
