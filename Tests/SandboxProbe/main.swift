import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy

// A client inside a sandbox for the sandbox tests, on the proxy library:
//   sandbox-probe lookup KEY DOMAIN…        prints `found DOMAIN VALUE`, or `error CASE: message`
//   sandbox-probe remove-domain DOMAIN      RemoveDomain: prints `ok`, or `error CASE: message`
//   sandbox-probe remove-volatile DOMAIN    RemoveVolatileDomain: the same
//   sandbox-probe subscribe N M PREFIX      opens N connections, each subscribing at the door
//                                           to M domains PREFIX.0…; prints `subscribed I` or
//                                           `refused I NAME: message` for each, then `done`
//   sandbox-probe fill PREFIX               fills what an application may hold, one limit at
//                                           a time, until refused: prints `filled KIND COUNT
//                                           BYTES MS refused CASE: message` for bytes, domains,
//                                           volatile-domains and volatile-bytes
//   sandbox-probe listen DOMAIN             listens to everything prefsd lets reach it:
// 1. through the proxy library: every event it may receive (`events(in: nil)`, which the
//    proxy asks for at the endpoint it chose by itself), printed as
//    `event changed|volatile DOMAIN KEY…`;
// 2. on a second, raw connection: every signal the bus (through xdg-dbus-proxy) delivers
//    at all, after `AddMatch type='signal'` and a `Subscribe` to DOMAIN at the endpoint (the
//    test's sentinel), printed as `signal SENDER INTERFACE MEMBER ARG0`.
// Prints `endpoint NAME`, then `ready` once both are in force; runs until killed.

@Sendable func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// The name of the error's case (of prefsd's refusal, for a refusal), as the tests match it.
func caseName(_ error: PreferencesProxyError) -> String {
    guard let refusal = error.refusal else { return error.code.rawValue }
    if refusal.name == .invalidArguments { return "invalidArguments" }
    // prefsd's own name, as the refusal's member is spelled: `AccessDenied` → `accessDenied`.
    let name = refusal.name.shortName ?? refusal.name.rawValue
    return name.prefix(1).lowercased() + name.dropFirst()
}

/// Prints the outcome of one call.
func report<Value>(_ body: () async throws(PreferencesProxyError) -> Value, _ describe: (Value) -> String) async {
    do {
        say(describe(try await body()))
    } catch {
        say("error \(caseName(error)): \(error.description)")
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: sandbox-probe lookup KEY DOMAIN… | remove-domain DOMAIN | remove-volatile DOMAIN | listen DOMAIN\n".utf8))
    exit(2)
}
if arguments[0] == "subscribe", arguments.count == 4, let connections = Int(arguments[1]), let perConnection = Int(arguments[2]) {
    var held: [DBusConnection] = []
    for index in 0..<connections {
        do {
            let connection = try DBusConnection.connectToSessionBus()
            held.append(connection)
            let domains = (0..<perConnection).map { "\(arguments[3]).c\(index).d\($0)" }
            _ = try await connection.call(
                .methodCall(
                    destination: SandboxBus.busName, path: PreferencesBus.objectPath, interface: SandboxBus.interface,
                    member: SandboxBus.subscribeMethod, body: [.stringArray(domains)]))
            say("subscribed \(index)")
        } catch let error as DBusError where error.code == .remote {
            say("refused \(index) \(error.name ?? ""): \(error.message)")
        } catch {
            say("refused \(index) \(error)")
        }
    }
    say("done")
    exit(0)
}
if arguments[0] == "fill" {
    let prefix = arguments[1]
    let proxy: PreferencesProxy
    do { proxy = try PreferencesProxy.connect() } catch { say("error \(error)"); exit(1) }
    /// Runs `step` with 0, 1, 2… until it throws (at most `limit` times); prints the figures.
    func fill(_ kind: String, bytesPerStep: Int, limit: Int, _ step: (Int) async throws(PreferencesProxyError) -> Void) async {
        let started = ContinuousClock.now
        var count = 0
        var refusal = "none"
        while count < limit {
            do {
                try await step(count)
                count += 1
            } catch {
                refusal = "\(caseName(error)): \(error.description)"
                break
            }
        }
        let elapsed = ContinuousClock.now - started
        let milliseconds = elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
        say("filled \(kind) \(count) \(count * bytesPerStep) \(milliseconds) refused \(refusal)")
    }
    await fill("domains", bytesPerStep: 0, limit: 200_000) { index throws(PreferencesProxyError) in
        try await proxy.write("\(prefix).D\(index)", "k", .integer(1))
    }
    let megabyte = PropertyListValue.data(Data(repeating: 0x42, count: 1_000_000))
    await fill("bytes", bytesPerStep: 1_000_000, limit: 1_000) { index throws(PreferencesProxyError) in
        try await proxy.write("\(prefix).D\(index % 8)", "big\(index)", megabyte)
    }
    await fill("volatile-domains", bytesPerStep: 0, limit: 20_000) { index throws(PreferencesProxyError) in
        try await proxy.setVolatileDomain("\(prefix).V\(index)", [:])
    }
    for domain in (try? await proxy.volatileDomains()) ?? [] { try? await proxy.removeVolatileDomain(domain) }
    let half = PropertyListValue.data(Data(repeating: 0x43, count: 500_000))
    await fill("volatile-bytes", bytesPerStep: 500_000, limit: 1_000) { index throws(PreferencesProxyError) in
        try await proxy.setVolatileDomain("\(prefix).VB\(index)", ["k": half])
    }
    say("done")
    exit(0)
}
if arguments[0] != "listen" {
    let proxy: PreferencesProxy
    do {
        proxy = try PreferencesProxy.connect()
    } catch {
        say("error \(error)")
        exit(1)
    }
    switch arguments[0] {
    case "lookup":
        await report(
            { () async throws(PreferencesProxyError) in try await proxy.lookup(Array(arguments.dropFirst(2)), arguments[1]) },
            { "found \($0.domain) \(OpenStepPropertyList.describe($0.value))" })
    case "remove-domain":
        await report({ () async throws(PreferencesProxyError) in try await proxy.removeDomain(arguments[1]) }, { "ok" })
    case "remove-volatile":
        await report({ () async throws(PreferencesProxyError) in try await proxy.removeVolatileDomain(arguments[1]) }, { "ok" })
    default:
        FileHandle.standardError.write(Data("sandbox-probe: unknown mode \(arguments[0])\n".utf8))
        exit(2)
    }
    exit(0)
}
let sentinelDomain = arguments[1]
let endpoint = PreferencesEndpoint.current
say("endpoint \(endpoint.busName)")

do {
    let proxy = try PreferencesProxy.connect()
    let events = try await proxy.events(in: nil, resolving: false)

    let raw = try DBusConnection.connectToSessionBus()
    raw.setSignalHandler { message in
        say("signal \(message.sender ?? "-") \(message.interface ?? "-") \(message.member ?? "-") \(message.body.first?.stringValue ?? "-")")
    }
    try await raw.addMatch("type='signal'")
    if endpoint.subscribesAtDoor {
        _ = try await raw.call(
            .methodCall(
                destination: endpoint.busName, path: PreferencesBus.objectPath, interface: SandboxBus.interface,
                member: SandboxBus.subscribeMethod, body: [.stringArray([sentinelDomain])]))
    }
    say("ready")
    for await event in events {
        switch event {
        case .changed(let change): say("event changed \(change.domain) \((change.changed.keys.sorted() + change.removed.sorted()).joined(separator: " "))")
        case .volatileChanged(let change): say("event volatile \(change.domain) \(change.changed.keys.sorted().joined(separator: " "))")
        case .forcedKeysChanged(let domain, let keys, _): say("event forced \(domain) \(keys.joined(separator: " "))")
        default: say("event other \(event.domain ?? "-")")
        }
    }
} catch {
    FileHandle.standardError.write(Data("sandbox-probe: \(error)\n".utf8))
    exit(1)
}
