import DBus

/// xfconf's names on the bus, as xfconfd 4.18 serves them: the bus name, the one object and
/// its interface, its methods and signals, and its error names.
public enum XfconfBus {
    /// The bus name xfconf's clients call.
    public static let busName = "org.xfce.Xfconf"
    /// The one object xfconfd exports.
    static let objectPath = "/org/xfce/Xfconf"
    /// The object's interface.
    static let interface = "org.xfce.Xfconf"

    /// Sent for each property whose value changed: `(channel, property, value)`.
    static let propertyChangedSignal = "PropertyChanged"
    /// Sent for each property that no longer has a value: `(channel, property)`.
    static let propertyRemovedSignal = "PropertyRemoved"

    /// The methods of `org.xfce.Xfconf`, with the arguments each takes.
    enum Method: String, CaseIterable, Sendable {
        case setProperty = "SetProperty"
        case getProperty = "GetProperty"
        case getAllProperties = "GetAllProperties"
        case propertyExists = "PropertyExists"
        case resetProperty = "ResetProperty"
        case listChannels = "ListChannels"
        case isPropertyLocked = "IsPropertyLocked"

        /// The D-Bus signature of the method's arguments.
        var inputSignature: String {
            switch self {
            case .setProperty: "ssv"
            case .getProperty, .getAllProperties, .propertyExists, .isPropertyLocked: "ss"
            case .resetProperty: "ssb"
            case .listChannels: ""
            }
        }
    }

    /// xfconfd's error names, `org.xfce.Xfconf.Error.*` (xfconf's `XfconfError` codes).
    enum ErrorName: String, Sendable {
        case unknown = "Unknown"
        case channelNotFound = "ChannelNotFound"
        case propertyNotFound = "PropertyNotFound"
        case readFailure = "ReadFailure"
        case writeFailure = "WriteFailure"
        case permissionDenied = "PermissionDenied"
        case internalError = "InternalError"
        case noBackend = "NoBackend"
        case invalidProperty = "InvalidProperty"
        case invalidChannel = "InvalidChannel"

        /// The name an error reply carries.
        var busName: String { "org.xfce.Xfconf.Error." + rawValue }
    }

    /// What `Introspect` answers: xfconfd's interface, as its `xfconf-dbus.xml` declares it.
    static let introspectionXML = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        <node>
          <interface name="org.xfce.Xfconf">
            <method name="SetProperty">
              <arg name="channel" type="s" direction="in"/>
              <arg name="property" type="s" direction="in"/>
              <arg name="value" type="v" direction="in"/>
            </method>
            <method name="GetProperty">
              <arg name="channel" type="s" direction="in"/>
              <arg name="property" type="s" direction="in"/>
              <arg name="value" type="v" direction="out"/>
            </method>
            <method name="GetAllProperties">
              <arg name="channel" type="s" direction="in"/>
              <arg name="property_base" type="s" direction="in"/>
              <arg name="properties" type="a{sv}" direction="out"/>
            </method>
            <method name="PropertyExists">
              <arg name="channel" type="s" direction="in"/>
              <arg name="property" type="s" direction="in"/>
              <arg name="exists" type="b" direction="out"/>
            </method>
            <method name="ResetProperty">
              <arg name="channel" type="s" direction="in"/>
              <arg name="property" type="s" direction="in"/>
              <arg name="recursive" type="b" direction="in"/>
            </method>
            <method name="ListChannels">
              <arg name="channels" type="as" direction="out"/>
            </method>
            <method name="IsPropertyLocked">
              <arg name="channel" type="s" direction="in"/>
              <arg name="property" type="s" direction="in"/>
              <arg name="locked" type="b" direction="out"/>
            </method>
            <signal name="PropertyChanged">
              <arg name="channel" type="s"/>
              <arg name="property" type="s"/>
              <arg name="value" type="v"/>
            </signal>
            <signal name="PropertyRemoved">
              <arg name="channel" type="s"/>
              <arg name="property" type="s"/>
            </signal>
          </interface>
        \(StandardInterfaces.introspectionXML)
        </node>

        """
}

/// Why the xfconf front refused a call: one of xfconfd's error names, and a message a person
/// can act on.
struct XfconfRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// The error name the call is answered with.
    var name: XfconfBus.ErrorName
    /// The message a person reads.
    var message: String

    init(_ name: XfconfBus.ErrorName, _ message: String) {
        self.name = name
        self.message = message
    }

    var description: String { message }

    /// xfconfd's answer to a property that has no value: `PropertyNotFound`, in its words.
    static func propertyNotFound(_ property: String, channel: String) -> Self {
        Self(.propertyNotFound, "Property \"\(property)\" does not exist on channel \"\(channel)\"")
    }

    /// xfconfd's answer to a change of a locked property: `PermissionDenied`, in its words,
    /// with prefsd's reason after them.
    static func permissionDenied(_ property: String, channel: String, reason: String) -> Self {
        Self(.permissionDenied, "Permission denied while modifying property \"\(property)\" on channel \"\(channel)\": \(reason)")
    }

    /// What a refusal of prefsd's own service becomes on xfconf's interface.
    init(_ refusal: PreferencesServiceError) {
        switch refusal.name {
        case .forced, .accessDenied: self.init(.permissionDenied, refusal.message)
        case .quotaExceeded, .storageFailed: self.init(.writeFailure, refusal.message)
        case .notFound: self.init(.propertyNotFound, refusal.message)
        default: self.init(.internalError, refusal.message)
        }
    }
}
