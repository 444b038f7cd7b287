import Foundation
import PreferencesModel
import Xfconf

/// Writing the user's channel files when prefsd stops serving xfconf: each channel's file
/// (`$XDG_CONFIG_HOME/xfce4/xfconf/xfce-perchannel-xml/C.xml`) then holds every value of
/// the domain `xfconf.C`, each with the type it was written with, in xfconfd's format, so
/// that an xfconfd started later reads them all; a channel whose domain is gone loses its
/// file. Each file is written durably (beside it, synced, renamed over it), then noted as
/// what the store holds (``XfconfChannelFiles``).
///
/// A file prefsd did not write last (edited while prefsd ran, or a file that is no regular
/// one) is never overwritten unseen: it is moved aside first (`C.xml.replaced-TIME`) and
/// named in the log.
extension PreferencesService {
    /// Writes every channel's file from the committed values (the store closed: nothing
    /// changes them any more).
    func writeXfconfChannels() {
        guard let xfconf else { return }
        let files = configuration.xfconfChannelFiles
        let time = XfconfChannelFiles.timestamp()
        let limit = configuration.limits.domainBytes
        var channels: [String: (channel: XfconfChannel, values: [String: PropertyListValue])] = [:]
        for (domain, values) in read(\.committed) {
            guard let channel = XfconfChannel(domain: domain), !values.isEmpty else { continue }
            channels[channel.name] = (channel, values)
        }
        let notes = XfconfChannelFiles.channelFiles(in: files.notesDirectory)
        var written = 0
        var leftOut: [String] = []
        for name in Set(channels.keys).union(notes.keys).sorted() {
            let path = files.userFile(name)
            let note = notes[name].flatMap { try? XfconfChannelFiles.read($0, limit: limit) }
            let existing: [UInt8]?
            var foreign = false
            do {
                existing = try XfconfChannelFiles.read(path, limit: limit)
            } catch .missing {
                existing = nil
            } catch {
                existing = nil
                foreign = true
            }
            foreign = foreign || (existing != nil && existing != note)
            guard let (channel, values) = channels[name] else {
                // The channel has no value any more (reset whole): its file goes.
                if !foreign {
                    if existing != nil { unlink(path) }
                } else if !keepReplaced(path, at: time) {
                    continue
                }
                noteXfconfChannel(name, bytes: nil, files: files)
                continue
            }
            var properties: [XfconfProperty: XfconfValue] = [:]
            let types = xfconf.types(domain: channel.domain)
            for (key, stored) in values {
                guard let property = XfconfProperty(key: key), let value = XfconfValue(storedValue: stored, type: types[key]) else {
                    leftOut.append("\(name) \(key)")
                    continue
                }
                properties[property] = value
            }
            let bytes = Array(XfconfChannelFile(channelName: name, values: properties).xml.utf8)
            if bytes != existing {
                if foreign, !keepReplaced(path, at: time) { continue }
                do {
                    try XfconfChannelFiles.write(bytes, to: path)
                    written += 1
                } catch {
                    logger.error("a channel file could not be written: \(error); the store keeps its values", metadata: ["file": "\(path)"])
                    continue
                }
            }
            noteXfconfChannel(name, bytes: bytes, files: files)
        }
        logger.info("wrote the user's xfconf channel files", metadata: ["folder": "\(files.userDirectory)", "written": "\(written)"])
        if !leftOut.isEmpty {
            logger.warning(
                "values of channels' domains left out of their channel files: xfconf cannot carry them (set through prefsd's own interface: data, dates, dictionaries, nested arrays, or keys no property is named)",
                metadata: ["count": "\(leftOut.count)", "keys": "\(leftOut.prefix(Self.namedLeftOutKeys).joined(separator: "; "))"])
        }
    }

    /// Moves a channel file prefsd did not write last aside before it is replaced or
    /// removed; whether it was (when not, it is left as it is).
    private func keepReplaced(_ path: String, at time: String) -> Bool {
        do {
            let aside = try XfconfChannelFiles.moveAside(path, kind: "replaced", at: time)
            logger.warning(
                "a channel file prefsd did not write was kept aside before prefsd wrote the channel's values",
                metadata: ["file": "\(path)", "keptAside": "\(aside)"])
            return true
        } catch {
            logger.error(
                "a channel file prefsd did not write could not be kept aside, so it is left as it is and the channel's values are not written to it: \(error)",
                metadata: ["file": "\(path)"])
            return false
        }
    }
}
