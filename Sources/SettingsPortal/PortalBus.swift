import DBus

/// The names of the Settings portal backend on the bus, as xdg-desktop-portal expects them.
public enum PortalBus {
    /// The bus name prefsd's backend owns, named in its `.portal` file.
    public static let busName = "org.freedesktop.impl.portal.desktop.prefsd"
    /// The object path every portal backend serves.
    public static let objectPath = "/org/freedesktop/portal/desktop"
    /// The backend interface xdg-desktop-portal calls.
    public static let interface = "org.freedesktop.impl.portal.Settings"
    /// The signal emitted when a setting changes.
    public static let settingChangedSignal = "SettingChanged"
    /// The interface version the backend implements (its `version` property).
    public static let version: UInt32 = 1
    /// The error for an unknown namespace or key, as the portal's own backends answer it.
    public static let notFoundError = "org.freedesktop.portal.Error.NotFound"

    /// The backend's introspection XML.
    public static let introspectionXML = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        <node>
          <!--
            org.freedesktop.impl.portal.Settings served by prefsd-portal: the namespace
            org.freedesktop.appearance from the prefsd domain of the same name, plus the
            prefsd domains listed in io.github.prefsd.Portal ExposedDomains, each as a
            namespace of its own, read-only.
          -->
          <interface name="org.freedesktop.impl.portal.Settings">
            <method name="ReadAll">
              <arg name="namespaces" type="as" direction="in"/>
              <arg name="value" type="a{sa{sv}}" direction="out"/>
            </method>
            <method name="Read">
              <arg name="namespace" type="s" direction="in"/>
              <arg name="key" type="s" direction="in"/>
              <arg name="value" type="v" direction="out"/>
            </method>
            <signal name="SettingChanged">
              <arg name="namespace" type="s"/>
              <arg name="key" type="s"/>
              <arg name="value" type="v"/>
            </signal>
            <property name="version" type="u" access="read"/>
          </interface>
        \(StandardInterfaces.introspectionXML)
        </node>
        """
}
