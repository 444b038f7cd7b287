import PreferencesModel
import Xfconf

/// The names of xfconf's calls checked in xfconfd's order, each refusal with xfconfd's error
/// name: an empty name where xfconfd's backend asserts there is one (`InternalError`), then
/// the channel (`InvalidChannel`), then the property (`InvalidProperty`).
enum XfconfNames {
    /// xfconfd's first check of most calls: neither name is empty (`property` `nil`: only the
    /// channel's is checked). xfconfd answers an empty one with `InternalError`.
    static func requireNonEmpty(channel: String, property: String?) throws(XfconfRefusal) {
        if channel.isEmpty { throw XfconfRefusal(.internalError, "the channel name is empty: name a channel, such as xsettings") }
        if property?.isEmpty == true { throw XfconfRefusal(.internalError, "the property name is empty: name a property, such as /Net/ThemeName") }
    }

    /// The channel named `name`.
    static func channel(_ name: String) throws(XfconfRefusal) -> XfconfChannel {
        do { return try XfconfChannel(name) } catch { throw XfconfRefusal(error) }
    }

    /// The property named `path`.
    static func property(_ path: String) throws(XfconfRefusal) -> XfconfProperty {
        do { return try XfconfProperty(path) } catch { throw XfconfRefusal(error) }
    }

    /// Whether `path` names the whole channel, as `GetAllProperties` and a recursive
    /// `ResetProperty` take `""` and `"/"`.
    static func isRoot(_ path: String) -> Bool { path.isEmpty || path == "/" }

    /// The user's keys a `ResetProperty` of `property` (`nil`: the whole channel) removes,
    /// from the keys `stored` and those a reader sees (`visible`, the administrator's
    /// defaults among them):
    /// - not `recursive`: the property's own key, `PropertyNotFound` when the user has no
    ///   value for it;
    /// - `recursive`: every key at or below the property that is not forced,
    ///   `PropertyNotFound` when the property is neither a property nor a branch above one;
    /// - the whole channel: every key that is not forced, `WriteFailure` when the user has
    ///   nothing in the channel (xfconfd fails to remove a channel file that is not there).
    static func keysToReset(
        stored: [String: PropertyListValue], visible: [String: PropertyListValue], channel: XfconfChannel, property: XfconfProperty?,
        recursive: Bool, isForced: (String) -> Bool
    ) throws(XfconfRefusal) -> [String] {
        guard let property else {
            if stored.isEmpty { throw XfconfRefusal(.writeFailure, "Unable to remove channel \"\(channel.name)\": No such file or directory") }
            return stored.keys.filter { !isForced($0) }.sorted()
        }
        guard recursive else {
            guard stored[property.key] != nil else { throw .propertyNotFound(property.path, channel: channel.name) }
            return [property.key]
        }
        func below(_ key: String) -> Bool { XfconfProperty(key: key).map(property.holds) ?? false }
        guard stored.keys.contains(where: below) || visible.keys.contains(where: below) else {
            throw .propertyNotFound(property.path, channel: channel.name)
        }
        return stored.keys.filter { below($0) && !isForced($0) }.sorted()
    }
}

extension XfconfRefusal {
    /// xfconfd's answer to a name or file the xfconf module refused (a channel file that
    /// cannot be read is a `ReadFailure`).
    init(_ error: XfconfError) {
        switch error {
        case .invalidChannel: self.init(.invalidChannel, error.description)
        case .invalidProperty: self.init(.invalidProperty, error.description)
        default: self.init(.readFailure, error.description)
        }
    }
}
