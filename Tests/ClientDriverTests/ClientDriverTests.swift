import BusTestSupport
import ClientDriver
import DBus
import Foundation
import PreferencesClient
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy
import PrefsdTestSupport
import Synchronization
import Testing

/// Collects a driver's news.
final class NewsLog: Sendable {
    private let news = Mutex<[String]>([])
    func add(_ item: ClientDriverEvent) {
        let line =
            switch item {
            case .loadFinished(let domain, let loaded): "loadFinished \(domain.name) \(loaded)"
            case .changed(let domain, let keys, let byWrite): "changed \(domain.name) \(keys) \(byWrite)"
            case .forcedChanged(let domain, let keys): "forced \(domain.name) \(keys)"
            case .writeFailed(let domain, let keys, _): "writeFailed \(domain.name) \(keys)"
            case .writesSettled: "writesSettled"
            case .writeEnded(let domain, let tickets, let failure): "writeEnded \(domain.name) \(tickets) \(failure.map { "\($0)" } ?? "stored")"
            }
        news.withLock { $0.append(line) }
    }
    func wait(for line: String) async -> Bool {
        await eventually(timeout: .seconds(10)) { news.withLock { $0.contains(line) } }
    }
}

@Suite struct ClientDriverTests {
    static let domain = ClientDomain("com.example.Driver")

    /// Follows ``domain`` and answers its load as an empty domain with no forced key;
    /// returns once it is loaded, with prefsd's record of calls cleared.
    static func loadEmpty(_ driver: ClientDriver, _ prefsd: ScriptedPrefsd, _ log: NewsLog) async throws {
        driver.follow(domain)
        for call in await prefsd.waitForCalls(2) {
            try prefsd.answer(call, [call.member == "ReadDomain" ? ScriptedPrefsd.dictionary([:]) : .stringArray([])])
        }
        #expect(await log.wait(for: "loadFinished com.example.Driver true"))
        prefsd.clear()
    }

    @Test("a domain's first load is one round trip: ReadDomain and ForcedKeys both reach prefsd before it answers either")
    func firstLoadIsOneRoundTrip() async throws {
        let bus = try PrivateBus()
        let prefsd = try await ScriptedPrefsd(bus: bus)
        let proxy = PreferencesProxy(connection: try DBusConnection.connect(address: bus.address))
        defer { proxy.close() }
        let log = NewsLog()
        let driver = ClientDriver(proxy: proxy) { log.add($0) }

        #expect(driver.follow(Self.domain) == .loading)
        let calls = await prefsd.waitForCalls(2)
        #expect(calls.map(\.member) == ["ReadDomain", "ForcedKeys"])
        #expect(driver.phase(of: Self.domain) == .loading)
        let read = try #require(calls.first { $0.member == "ReadDomain" })
        let forced = try #require(calls.first { $0.member == "ForcedKeys" })
        try prefsd.answer(read, [ScriptedPrefsd.dictionary(["Color": .string("blue")])])
        try prefsd.answer(forced, [.stringArray(["Locked"])])
        #expect(await log.wait(for: "loadFinished com.example.Driver true"))
        #expect(driver.value("Color", in: Self.domain) == .string("blue"))
        #expect(driver.forcedKeys(in: Self.domain) == ["Locked"])
        // A second read costs nothing: the next call prefsd gets is a sentinel sent after
        // it on the same connection (calls of one connection arrive in order).
        #expect(await driver.load(Self.domain))
        proxy.perform(PreferencesCall.read("io.github.prefsd.Sentinel", "k")) { _ in }
        let after = await prefsd.waitForCalls(3)
        #expect(after.dropFirst(2).map(\.member) == ["Read"])
    }

    @Test("writes made while one is in flight go out as one Apply once it is answered")
    func writesCoalesce() async throws {
        let bus = try PrivateBus()
        let prefsd = try await ScriptedPrefsd(bus: bus)
        let proxy = PreferencesProxy(connection: try DBusConnection.connect(address: bus.address))
        defer { proxy.close() }
        let log = NewsLog()
        let driver = ClientDriver(proxy: proxy) { log.add($0) }
        try await Self.loadEmpty(driver, prefsd, log)

        #expect(driver.write([("A", .integer(1))], in: Self.domain))
        let first = await prefsd.waitForCalls(1)
        #expect(first.map(\.member) == ["Apply"])
        // Laid over the cache at once, while prefsd has not answered.
        #expect(driver.write([("B", .integer(2))], in: Self.domain))
        #expect(driver.write([("C", .integer(3)), ("A", nil)], in: Self.domain))
        #expect(driver.entries(of: Self.domain) == ["B": .integer(2), "C": .integer(3)])
        try prefsd.answer(first[0])
        let calls = await prefsd.waitForCalls(2)
        #expect(calls.map(\.member) == ["Apply", "Apply"])
        let second = try #require(calls.last)
        #expect(second.body.count == 3)
        if case .array(_, let entries) = second.body[1] { #expect(entries.count == 2) }  // B and C set
        #expect(second.body[2] == .stringArray(["A"]))  // A removed
        try prefsd.answer(second)
        #expect(await log.wait(for: "writesSettled"))
        #expect(driver.entries(of: Self.domain) == ["B": .integer(2), "C": .integer(3)])
        #expect(!driver.hasPendingWrites())
    }

    @Test("each write's outcome is told by its ticket: stored, or refused with prefsd's own error")
    func writeOutcomes() async throws {
        let bus = try PrivateBus()
        let prefsd = try await ScriptedPrefsd(bus: bus)
        let proxy = PreferencesProxy(connection: try DBusConnection.connect(address: bus.address))
        defer { proxy.close() }
        let log = NewsLog()
        let driver = ClientDriver(proxy: proxy) { log.add($0) }
        try await Self.loadEmpty(driver, prefsd, log)

        let stored = try #require(driver.submit([("A", .integer(1))], in: Self.domain))
        let first = await prefsd.waitForCalls(1)
        try prefsd.answer(first[0])
        #expect(await log.wait(for: "writeEnded com.example.Driver [\(stored)] stored"))

        let refused = try #require(driver.submit([("B", .integer(2))], in: Self.domain))
        let second = await prefsd.waitForCalls(2)
        try prefsd.connection.send(second[1].makeError(name: PreferencesErrorName.quotaExceeded.busName, message: "too big"))
        let expected = "writeEnded com.example.Driver [\(refused)] \(PreferencesProxyError(.quotaExceeded("too big")))"
        #expect(await log.wait(for: expected))
        #expect(driver.value("B", in: Self.domain) == nil, "the refused value is taken back")
    }

    @Test("a blocking load of several domains sends every domain's reads before awaiting any answer")
    func blockingLoadIsOneRoundTrip() async throws {
        let bus = try PrivateBus()
        let prefsd = try await ScriptedPrefsd(bus: bus)
        let proxy = PreferencesProxy(connection: try DBusConnection.connect(address: bus.address))
        defer { proxy.close() }
        let driver = ClientDriver(proxy: proxy) { _ in }
        let other = ClientDomain("com.example.Other")
        let result = Mutex<Bool?>(nil)
        DispatchQueue.global().async {
            let loaded = driver.loadBlocking([Self.domain, other], timeout: .seconds(10))
            result.withLock { $0 = loaded }
        }
        // Four calls reach prefsd while none is answered: both domains in one round trip.
        let calls = await prefsd.waitForCalls(4)
        #expect(calls.count == 4)
        #expect(result.withLock { $0 } == nil, "still waiting for answers")
        for call in calls {
            try prefsd.answer(call, [call.member == "ReadDomain" ? ScriptedPrefsd.dictionary(["K": .integer(1)]) : .stringArray([])])
        }
        _ = await eventually(timeout: .seconds(10)) { result.withLock { $0 } != nil }
        #expect(result.withLock { $0 } == true)
        #expect(driver.value("K", in: other) == .integer(1))
    }

    @Test("waitForLoads returns once no load is on its way, and a failed load's error is kept until one succeeds")
    func waitingForLoads() async throws {
        let bus = try PrivateBus()
        let prefsd = try await ScriptedPrefsd(bus: bus)
        let proxy = PreferencesProxy(connection: try DBusConnection.connect(address: bus.address))
        defer { proxy.close() }
        let driver = ClientDriver(proxy: proxy) { _ in }
        let waited = Mutex<Bool?>(nil)
        driver.follow(Self.domain)
        DispatchQueue.global().async {
            let settled = driver.waitForLoads(timeout: .seconds(10))
            waited.withLock { $0 = settled }
        }
        let calls = await prefsd.waitForCalls(2)
        #expect(waited.withLock { $0 } == nil, "a load is on its way")
        let read = try #require(calls.first { $0.member == "ReadDomain" })
        let forced = try #require(calls.first { $0.member == "ForcedKeys" })
        try prefsd.answer(forced, [.stringArray([])])
        try prefsd.connection.send(read.makeError(name: PreferencesErrorName.accessDenied.busName, message: "not yours"))
        _ = await eventually(timeout: .seconds(10)) { waited.withLock { $0 } != nil }
        #expect(waited.withLock { $0 } == true)
        #expect(driver.phase(of: Self.domain) == .unavailable)
        #expect(driver.loadFailure(of: Self.domain) == PreferencesProxyError(.accessDenied("not yours")))
        #expect(driver.waitForLoads(timeout: .seconds(1)), "nothing on its way: at once")
    }

    @Test("with a flush interval, writes made after an answered call wait and merge into one; flushingAtOnce sends them now")
    func flushInterval() async throws {
        let bus = try PrivateBus()
        let prefsd = try await ScriptedPrefsd(bus: bus)
        let proxy = PreferencesProxy(connection: try DBusConnection.connect(address: bus.address))
        defer { proxy.close() }
        let log = NewsLog()
        // Longer than any test: only flushingAtOnce sends the second call.
        let driver = ClientDriver(proxy: proxy, flushInterval: .seconds(600)) { log.add($0) }
        try await Self.loadEmpty(driver, prefsd, log)

        let first = try #require(driver.submit([("A", .integer(1))], in: Self.domain))
        let sent = await prefsd.waitForCalls(1)
        #expect(sent.map(\.member) == ["Apply"], "the first write goes at once")
        try prefsd.answer(sent[0])
        #expect(await log.wait(for: "writeEnded com.example.Driver [\(first)] stored"))
        driver.write([("B", .integer(2))], in: Self.domain)
        driver.write([("C", .integer(3))], in: Self.domain)
        // A sentinel on the same connection: had the writes gone out, they would reach prefsd before it.
        proxy.perform(PreferencesCall.read("io.github.prefsd.Sentinel", "k")) { _ in }
        let waiting = await prefsd.waitForCalls(2)
        #expect(waiting.dropFirst().map(\.member) == ["Read"], "the writes wait for the interval")
        #expect(driver.hasPendingWrites())
        #expect(driver.value("C", in: Self.domain) == .integer(3), "readers see them meanwhile")

        DispatchQueue.global().async { driver.flushingAtOnce {} }
        let flushed = await prefsd.waitForCalls(3)
        let apply = try #require(flushed.dropFirst(2).first)
        #expect(apply.member == "Apply")
        #expect(apply.body.dropFirst().first == ScriptedPrefsd.dictionary(["B": .integer(2), "C": .integer(3)]), "merged into one call")
    }
}
