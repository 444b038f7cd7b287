import Dispatch
import Preferences

let defaults = Preferences(applicationIdentifier: "com.example.Hello")
defaults.register(defaults: ["Greeting": "Hello"])        // used while nothing is stored
print(defaults.string(forKey: "Greeting") ?? "no greeting")

// The handler gets the key's new value, a PropertyListValue? (nil: removed).
// Keep the returned observation: releasing it ends the observation.
let changed = DispatchSemaphore(value: 0)
let observation = defaults.observe("Greeting") { value in
    if case .string(let text)? = value { print("Greeting is now \(text)") }
    changed.signal()
}
// A new value each run (an unchanged one changes nothing, and no change would come).
let greeting = defaults.string(forKey: "Greeting") == "Bonjour" ? "Salut" : "Bonjour"
defaults.set(greeting, forKey: "Greeting")                // shown at once, saved in the background
changed.wait()
print(defaults.synchronize() ? "saved" : "not saved: is prefsd running?")
observation.cancel()
