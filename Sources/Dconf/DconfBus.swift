import DBus

/// dconf's names on the bus, as dconf-service (0.40) exports them, and their introspection.
public enum DconfBus {
    /// The bus name dconf's clients call.
    public static let busName = "ca.desrt.dconf"
    /// The writer's interface: `Init()`, `Change(ay) → s`, the signal `Notify(s, as, s)`.
    public static let writerInterface = "ca.desrt.dconf.Writer"
    /// Where a database's writer lives: this prefix and the database's name (`user`).
    public static let writerPathPrefix = "/ca/desrt/dconf/Writer/"
    /// The interface of `Blame() → s`.
    public static let serviceInfoInterface = "ca.desrt.dconf.ServiceInfo"
    /// The object answering ``serviceInfoInterface``.
    public static let serviceInfoPath = "/ca/desrt/dconf"
    /// `Init()`: makes sure the database file exists.
    public static let initMethod = "Init"
    /// `Change(ay blob) → s tag`.
    public static let changeMethod = "Change"
    /// `Blame() → s`.
    public static let blameMethod = "Blame"
    /// `Notify(s prefix, as changes, s tag)`.
    public static let notifySignal = "Notify"
    /// How prefsd's answer to a call of dconf's objects begins while it does not serve dconf
    /// (it could not take dconf's database in); the error is `org.freedesktop.DBus.Error.Failed`
    /// and the rest of its message says why.
    public static let refusalPrefix = "prefsd does not serve dconf: "
    /// The reason prefsd gives while it has not yet decided whether it serves dconf.
    public static let startingReason = "prefsd is still starting"
    /// The reason prefsd gives once it is stopping: the change was not made, and the next
    /// owner of dconf's name (dconf-service, or prefsd started again) serves the next one.
    public static let stoppingReason = "prefsd is stopping; the change was not made: make it again"

    /// The writer's object path for the database `name`.
    public static func writerPath(database name: String) -> String { writerPathPrefix + name }

    /// What `Introspect` answers for a writer object.
    public static let writerIntrospectionXML = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        <node>
          <interface name="ca.desrt.dconf.Writer">
            <method name="Init"/>
            <method name="Change">
              <arg name="blob" type="ay" direction="in"/>
              <arg name="tag" type="s" direction="out"/>
            </method>
            <signal name="Notify">
              <arg name="prefix" type="s"/>
              <arg name="changes" type="as"/>
              <arg name="tag" type="s"/>
            </signal>
          </interface>
        \(StandardInterfaces.introspectionXML)
        </node>

        """

    /// What `Introspect` answers for the service-information object.
    public static let serviceInfoIntrospectionXML = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        <node>
          <interface name="ca.desrt.dconf.ServiceInfo">
            <method name="Blame">
              <arg name="blame" type="s" direction="out"/>
            </method>
          </interface>
        \(StandardInterfaces.introspectionXML)
          <node name="Writer"/>
        </node>

        """
}
