import Foundation
import Preferences
import PreferencesModel

// A second process for the client library's tests, talking to prefsd through the library:
//   preferences-probe read DOMAIN KEY          prints the value as old-style text, or (nil)
//   preferences-probe string DOMAIN KEY        prints string(forKey:), or (nil)
//   preferences-probe write DOMAIN KEY TEXT    sets TEXT (old-style property list) and synchronizes
//   preferences-probe watch DOMAIN KEY COUNT   prints "ready", then one line per change, COUNT times
//   preferences-probe encoded DOMAIN KEY       prints the value's bytes (its binary encoding) in hex, or (nil)
//   preferences-probe watch-encoded DOMAIN KEY COUNT   watch, printing each value's bytes in hex

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 3 else {
    FileHandle.standardError.write(Data("usage: preferences-probe read|string|encoded|write|watch|watch-encoded DOMAIN KEY [VALUE|COUNT]\n".utf8))
    exit(2)
}
let preferences = Preferences(applicationIdentifier: arguments[1], arguments: [])
let key = arguments[2]

@Sendable func describe(_ value: PropertyListValue?) -> String {
    value.map { OpenStepPropertyList.describe($0) } ?? "(nil)"
}

/// The value's bytes, as the store encodes them, in hex: equal exactly when the bytes are.
@Sendable func encoded(_ value: PropertyListValue?) -> String {
    value.map { $0.encoded().map { String(format: "%02x", $0) }.joined() } ?? "(nil)"
}

/// Prints a line and flushes it at once, so a test reading the output sees it.
@Sendable func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

switch arguments[0] {
case "read":
    say(describe(preferences.value(forKey: key)))
case "encoded":
    say(encoded(preferences.value(forKey: key)))
case "string":
    say(preferences.string(forKey: key) ?? "(nil)")
case "write" where arguments.count == 4:
    let value = (try? OpenStepPropertyList.parse(arguments[3])) ?? .string(arguments[3])
    preferences.set(value, forKey: key)
    exit(preferences.synchronize() ? 0 : 1)
case "watch" where arguments.count == 4, "watch-encoded" where arguments.count == 4:
    let count = Int(arguments[3]) ?? 1
    let seen = DispatchSemaphore(value: 0)
    let format = arguments[0] == "watch" ? describe : encoded
    let observation = preferences.observe(key) { value in
        say("\(key)=\(format(value))")
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
