import Foundation
import Preferences
import PreferencesModel

// A second process for the client library's tests, talking to prefsd through the library:
//   preferences-probe read DOMAIN KEY          prints the value as old-style text, or (nil)
//   preferences-probe string DOMAIN KEY        prints string(forKey:), or (nil)
//   preferences-probe write DOMAIN KEY TEXT    sets TEXT (old-style property list) and synchronizes
//   preferences-probe watch DOMAIN KEY COUNT   prints "ready", then one line per change, COUNT times

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 3 else {
    FileHandle.standardError.write(Data("usage: preferences-probe read|string|write|watch DOMAIN KEY [VALUE|COUNT]\n".utf8))
    exit(2)
}
let preferences = Preferences(applicationIdentifier: arguments[1], arguments: [])
let key = arguments[2]

@Sendable func describe(_ value: PropertyListValue?) -> String {
    value.map { OpenStepPropertyList.describe($0) } ?? "(nil)"
}

/// Prints a line and flushes it at once, so a test reading the output sees it.
@Sendable func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

switch arguments[0] {
case "read":
    say(describe(preferences.value(forKey: key)))
case "string":
    say(preferences.string(forKey: key) ?? "(nil)")
case "write" where arguments.count == 4:
    let value = (try? OpenStepPropertyList.parse(arguments[3])) ?? .string(arguments[3])
    preferences.set(value, forKey: key)
    exit(preferences.synchronize() ? 0 : 1)
case "watch" where arguments.count == 4:
    let count = Int(arguments[3]) ?? 1
    let seen = DispatchSemaphore(value: 0)
    let observation = preferences.observe(key) { value in
        say("\(key)=\(describe(value))")
        seen.signal()
    }
    say("ready")
    for _ in 0..<count {
        if seen.wait(timeout: .now() + 20) == .timedOut { exit(3) }
    }
    observation.cancel()
default:
    FileHandle.standardError.write(Data("unknown command\n".utf8))
    exit(2)
}
