import Foundation
import Gtk
import PreferencesProxy
import SettingsBundle

/// The Settings app: `prefs-settings [DOMAIN [--history]]` opens the window, on DOMAIN
/// when given (on its History page with `--history`); `prefs-settings /GSETTINGS/PATH/[KEY]`
/// opens the schema page of that directory (and that key's page).
public enum SettingsApp {
    /// The application's identifier (D-Bus name, desktop file).
    public static let identifier = "io.github.prefsd.Settings"

    /// Runs the app until its window closes; returns the exit status.
    public static func main(arguments: [String]) -> Int32 {
        let application = Application(identifier: identifier)
        application.quitOnTerminationSignals()
        let proxy: PreferencesProxy
        do {
            proxy = try PreferencesProxy.connect()
        } catch {
            FileHandle.standardError.write(Data("prefs-settings: \(error.description)\n".utf8))
            return 69
        }
        defer { proxy.close() }
        let environment = ProcessInfo.processInfo.environment
        let controller = SettingsController(
            proxy: proxy, locator: SettingsBundleLocator(environment: environment),
            languages: Localization.languages(environment: environment))
        var window: SettingsWindow?
        application.onActivate { [unowned application] in
            if let window { return window.window.present() }
            let made = SettingsWindow(application: application, controller: controller)
            let target = arguments.dropFirst().first { !$0.hasPrefix("-") }
            made.initialDomain = target.flatMap(SchemaPages.domain(ofPath:)) ?? target
            if target?.hasPrefix("/") == true { made.initialPath = target }
            made.initialHistory = arguments.dropFirst().contains("--history")
            controller.window = made
            window = made
            made.window.present()
            controller.start()
        }
        return application.run(arguments: Array(arguments.prefix(1)))
    }
}
