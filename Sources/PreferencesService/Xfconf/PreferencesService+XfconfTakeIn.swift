import Foundation
import PreferencesModel
import PreferencesStore
import Xfconf

extension HistoryOrigin {
    /// The values of channel files xfconfd wrote, taken in when prefsd starts serving xfconf.
    static let xfconfd = "xfconfd"
}

/// Taking in the user's channel files (`$XDG_CONFIG_HOME/xfce4/xfconf/xfce-perchannel-xml/
/// C.xml`) when prefsd starts serving xfconf: every file that is not what the store holds
/// (prefsd's note of the channel, see ``XfconfChannelFiles``) is read as xfconfd reads it,
/// and its values go into the store exactly, each with its type, as one change (who =
/// `xfconfd`), before any call is answered; a copy of each file taken in is kept beside it
/// (`C.xml.taken-in-TIME`). A property the note has and the file lacks was reset under
/// xfconfd and is removed; a channel whose note is there but whose file is gone, likewise.
///
/// The values pass the gate every change passes, key by key: a property the administrator
/// locks, or one past a quota, is left out (named in the log) and the others are taken in.
/// A file that does not parse, is not a regular file or is larger than a domain may be is
/// moved aside (`C.xml.damaged-TIME`) and named in the log; the other channels are taken in.
extension PreferencesService {
    /// A change of the take-in on its way into the store: a value (with its GVariant type),
    /// or a removal (`value` `nil`).
    private struct XfconfTaken {
        var channel: XfconfChannel
        var property: XfconfProperty
        var value: XfconfValue?
    }

    /// Takes in the user's channel files that the store does not hold, into the running
    /// state (in force, not answering calls yet) and `store`; logs what it did.
    func takeInXfconfChannels(store: DomainStore) {
        let files = configuration.xfconfChannelFiles
        let time = XfconfChannelFiles.timestamp()
        let limit = configuration.limits.domainBytes
        let userFiles = XfconfChannelFiles.channelFiles(in: files.userDirectory)
        let notes = XfconfChannelFiles.channelFiles(in: files.notesDirectory)
        var changes: [XfconfTaken] = []
        var leftOut: [String: String] = [:]
        var taken: [(name: String, bytes: [UInt8]?)] = []
        for name in Set(userFiles.keys).union(notes.keys).sorted() {
            let channel: XfconfChannel
            do {
                channel = try XfconfChannel(name)
            } catch {
                if let path = userFiles[name] {
                    logger.warning("a channel file prefsd cannot take in: \(error); it is left as it is", metadata: ["file": "\(path)"])
                }
                continue
            }
            let note = notes[name].flatMap { try? XfconfChannelFiles.read($0, limit: limit) }
            var bytes: [UInt8]?
            if let path = userFiles[name] {
                do {
                    bytes = try XfconfChannelFiles.read(path, limit: limit)
                } catch .missing {
                    bytes = nil
                } catch {
                    keepAside(path, because: "\(error)", at: time)
                    continue
                }
            }
            guard bytes != note else { continue }
            var now: XfconfChannelFile?
            if let bytes, let path = userFiles[name] {
                do {
                    now = try XfconfChannelFile(parsing: bytes, administrator: false)
                } catch {
                    keepAside(path, because: "\(error)", at: time)
                    continue
                }
                do {
                    // Kept first, durably: whatever happens next, the file is not lost.
                    try XfconfChannelFiles.write(bytes, to: path + ".taken-in-" + time)
                } catch {
                    logger.error("a channel file could not be kept aside, so it is not taken in: \(error)", metadata: ["file": "\(path)"])
                    continue
                }
                for skipped in now?.skipped ?? [] {
                    leftOut["\(name) \(skipped)"] = "xfconf's clients cannot name the property (xfconfd checks no names in its files)"
                }
            }
            let before = note.flatMap { try? XfconfChannelFile(parsing: $0, administrator: false) }
            for (property, value) in (now?.values ?? [:]).sorted(by: { $0.key < $1.key }) {
                changes.append(XfconfTaken(channel: channel, property: property, value: value))
            }
            for property in (before.map { Array($0.values.keys) } ?? []).sorted() where now?.values[property] == nil {
                changes.append(XfconfTaken(channel: channel, property: property, value: nil))
            }
            taken.append((name, bytes))
        }
        guard !taken.isEmpty else { return }
        let taking = changes.map { change in
            TakenChange(
                name: "\(change.channel) \(change.property)", domain: change.channel.domain, key: change.property.key,
                value: change.value?.storedValue, type: change.value?.storedType)
        }
        let refused: [String: String]
        switch takeIn(taking, who: HistoryOrigin.xfconfd, origin: .local, store: store) {
        case .success(let gateRefused):
            refused = gateRefused
            leftOut.merge(refused) { first, _ in first }
        case .failure(let error):
            logger.error(
                "the values of the user's channel files could not be stored: \(error); the files are left as they are, and taken in at the next start",
                metadata: ["channels": "\(taken.map(\.name).joined(separator: ", "))"])
            return
        }
        for (change, entry) in zip(changes, taking) where refused[entry.name] == nil {
            xfconf?.setType(change.value?.storedType, domain: change.channel.domain, key: change.property.key)
        }
        for (name, bytes) in taken { noteXfconfChannel(name, bytes: bytes, files: files) }
        let values = changes.filter { $0.value != nil }.count
        logger.notice(
            "took in the user's xfconf channel files",
            metadata: [
                "folder": "\(files.userDirectory)", "channels": "\(taken.map(\.name).joined(separator: ", "))",
                "properties": "\(values)", "removed": "\(changes.count - values)", "leftOut": "\(leftOut.count)",
            ])
        logLeftOut(
            leftOut, "properties of the user's channel files left out of the take-in; the copies kept aside (C.xml.taken-in-\(time)) hold them",
            naming: "properties", metadata: ["folder": "\(files.userDirectory)"])
    }

    /// Moves a user's channel file that cannot be taken in aside, naming it in the log.
    private func keepAside(_ path: String, because reason: String, at time: String) {
        do {
            let aside = try XfconfChannelFiles.moveAside(path, kind: "damaged", at: time)
            logger.warning(
                "a channel file that does not read as xfconfd's (damaged, not a regular file, or too large) was moved aside, not taken in",
                metadata: ["file": "\(path)", "movedTo": "\(aside)", "error": "\(reason)"])
        } catch {
            logger.warning(
                "a channel file that does not read as xfconfd's was not taken in, and could not be moved aside: \(error)",
                metadata: ["file": "\(path)", "error": "\(reason)"])
        }
    }

    /// Notes that the store holds channel `name` as `bytes` say (`nil`: no file).
    func noteXfconfChannel(_ name: String, bytes: [UInt8]?, files: XfconfChannelFiles) {
        let note = files.note(name)
        guard let bytes else {
            unlink(note)
            return
        }
        do {
            try XfconfChannelFiles.write(bytes, to: note)
        } catch {
            logger.warning(
                "prefsd's note of a channel could not be written; the channel's file will be taken in again",
                metadata: ["file": "\(note)", "error": "\(error)"])
        }
    }
}
