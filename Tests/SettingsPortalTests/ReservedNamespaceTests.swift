import PreferencesProtocol
import SettingsPortal
import Testing

/// The domains the portal serves to everyone from prefsd are ones no sandboxed application
/// may change.
@Test("the portal's appearance and configuration domains are reserved from sandboxed applications")
func portalDomainsReserved() {
    #expect(ReservedDomains.contains(Appearance.namespace))
    #expect(ReservedDomains.contains(PortalSettings.configurationDomain))
}
