import Gtk
import PreferencesModel
import PreferencesProxy

extension SettingsController {
    /// Reads `domain`'s change journal and hands it to the window's History page. While a
    /// read is on its way, further asks are folded into one more read after it, so a burst
    /// of changes costs at most two reads.
    func loadHistory(_ domain: String) {
        if historyLoads[domain] != nil {
            historyLoads[domain] = true
            return
        }
        historyLoads[domain] = false
        let proxy = proxy, handle = handle
        Task {
            var entries: [HistoryEntry]?
            var failure: PreferencesProxyError?
            do throws(PreferencesProxyError) {
                entries = try await proxy.fullHistory(domain)
            } catch {
                failure = error
            }
            let loaded = entries, outcome = failure
            handle.post { controller in
                let again = controller.historyLoads.removeValue(forKey: domain) ?? false
                if let loaded { controller.window?.historyLoaded(loaded, in: domain) }
                if let outcome {
                    controller.window?.showError("The history of “\(controller.title(of: domain))” could not be read: \(outcome.description).")
                }
                if again { controller.loadHistory(domain) }
            }
        }
    }

    /// Undoes `domain`'s last change (what `prefs undo DOMAIN` does): the values from
    /// before it come back, and the undo is recorded with who = `restore`.
    func undoLastChange(_ domain: String) {
        let proxy = proxy, handle = handle, title = title(of: domain)
        Task {
            var message: String?
            do throws(PreferencesProxyError) {
                if try await proxy.undoLastChange(domain).isEmpty {
                    message = "“\(title)” has no change to undo: the history holds none."
                }
            } catch {
                message = ErrorMessages.notUndone(title, error)
            }
            guard let message else { return }
            handle.post { $0.window?.showError(message) }
        }
    }
}
