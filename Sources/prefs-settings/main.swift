import Foundation
import SettingsApp

exit(SettingsApp.main(arguments: CommandLine.arguments))
