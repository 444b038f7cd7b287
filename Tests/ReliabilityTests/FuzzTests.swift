import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PrefsdTestSupport
import Testing

extension Reliability {
    /// Hostile input never crashes or hangs prefsd, is answered with the
    /// right error, and creates no file outside the store directory.
    @Suite("Hostile input")
    struct HostileInput {
        /// Every file under `directory` (recursively) and in the current directory and the
        /// temporary directory whose name carries the fuzz marker.
        static func snapshot(_ directory: URL) -> Set<String> {
            var paths = Set<String>()
            if let walker = FileManager.default.enumerator(atPath: directory.path) {
                for case let path as String in walker { paths.insert(path) }
            }
            for place in [FileManager.default.currentDirectoryPath, NSTemporaryDirectory(), "/tmp", "/"] {
                for name in (try? FileManager.default.contentsOfDirectory(atPath: place)) ?? [] where name.contains(MessageFuzzer.marker) {
                    paths.insert("\(place)/\(name)")
                }
            }
            return paths
        }

        @Test("100,000 random and malformed messages: no crash, no hang, right errors, no stray files")
        func fuzz() async throws {
            let total = Long.pick(100_000, long: 1_000_000)
            let connections = 8
            let batch = 500
            let seed = ProcessInfo.processInfo.environment["PREFSD_FUZZ_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 0 ... .max)
            let fixture = try await ServiceFixture()
            let before = Self.snapshot(fixture.bus.directory)
            let counts = Locked((sent: 0, answered: 0, checked: 0, refusedByClient: 0, reconnects: 0, pings: 0, wrong: 0))
            let start = ContinuousClock.now

            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<connections {
                    group.addTask {
                        var fuzzer = MessageFuzzer(seed: seed &+ UInt64(worker))
                        var connection = try fixture.connect()
                        defer { connection.close() }
                        var sent = 0
                        while sent < total / connections {
                            try await withThrowingTaskGroup(of: Void.self) { calls in
                                for index in 0..<batch {
                                    var (message, shape) = fuzzer.message()
                                    if index % 10 == 0 {
                                        let live = connection
                                        calls.addTask {
                                            let answer: Result<DBusMessage, DBusError>
                                            do { answer = .success(try await live.call(message, timeout: .seconds(60))) } catch DBusError.invalidMessage {
                                                counts.withLock { $0.refusedByClient += 1 }; return
                                            } catch let error as DBusError { answer = .failure(error) } catch {
                                                answer = .failure(.invalidArguments("\(error)"))
                                            }
                                            if case .failure(.disconnected) = answer { return }
                                            let wrong = MessageFuzzer.wrongAnswer(shape, answer)
                                            counts.withLock {
                                                $0.answered += 1; $0.checked += 1; if wrong != nil { $0.wrong += 1 }
                                            }
                                            if let wrong, counts.withLock({ $0.wrong }) <= 20 {
                                                Issue.record(
                                                    "\(message.interface ?? "-").\(message.member ?? "-") (\(message.signature)) on \(message.path ?? "-"): \(wrong)"
                                                )
                                            }
                                        }
                                    } else {
                                        message.noReplyExpected = true
                                        // A disconnected error: the bus dropped this connection (it reconnects after the batch), so not sent.
                                        do { try connection.send(message) } catch DBusError.invalidMessage {
                                            counts.withLock { $0.refusedByClient += 1 }; continue
                                        } catch DBusError.disconnected { continue } catch {
                                            Issue.record("sending \(message.member ?? "-") failed: \(error)"); continue
                                        }
                                    }
                                    sent += 1
                                    counts.withLock { $0.sent += 1 }
                                }
                                try await calls.waitForAll()
                            }
                            // Alive and answering: Peer.Ping is answered after everything
                            // this connection sent before it was dispatched.
                            do {
                                try await fixture.ping(connection, timeout: .seconds(30))
                                counts.withLock { $0.pings += 1 }
                            } catch DBusError.disconnected {
                                // The bus drops a connection that sent what it considers invalid.
                                connection.close()
                                connection = try fixture.connect()
                                counts.withLock { $0.reconnects += 1 }
                                try await fixture.ping(connection, timeout: .seconds(30))
                            }
                            #expect(fixture.isRunning, "prefsd died")
                            if !fixture.isRunning { return }
                        }
                    }
                }
                try await group.waitForAll()
            }

            let elapsed = milliseconds(since: start) / 1000
            #expect(fixture.isRunning)
            let check = try fixture.connect()
            defer { check.close() }
            try await fixture.ping(check)
            let client = ServiceClient(connection: check)
            try await client.write("com.example.AfterFuzz", "k", .integer(1))
            #expect(try await client.readValue("com.example.AfterFuzz", "k") == .integer(1))

            // Nothing outside the store directory, and nothing but the store in it.
            let after = Self.snapshot(fixture.bus.directory)
            let storePrefix = fixture.storeDirectory.lastPathComponent + "/"
            // prefsd's snapshots of the domains read (ReadDomain of any name, the fuzz's too)
            // live in its runtime directory, at most 512 of them (SnapshotKeeper).
            let snapshots = after.subtracting(before).filter { $0.hasPrefix("runtime/prefsd/snapshots-") }
            #expect(snapshots.count <= 512, "\(snapshots.count) snapshot files")
            let stray = after.subtracting(before).filter { !$0.hasPrefix(storePrefix) }.subtracting(snapshots)
            #expect(stray.isEmpty, "files created outside the store: \(stray.sorted())")
            let storeFiles = Set(fixture.storeEntries)
            #expect(
                storeFiles.isSubset(of: ["store.sqlite", "store.sqlite-wal", "store.sqlite-shm", "lock", "store.reserve"]),
                "unexpected files in the store: \(storeFiles)")

            let figures = counts.withLock { $0 }
            #expect(figures.sent >= total)
            #expect(figures.wrong == 0)
            let memory = fixture.memory
            print(
                "reliability.fuzz seed=\(seed) messages=\(figures.sent) with_reply_checked=\(figures.checked) wrong_answers=\(figures.wrong) "
                    + "refused_by_client=\(figures.refusedByClient) reconnects=\(figures.reconnects) pings=\(figures.pings) "
                    + String(format: "seconds=%.1f rate=%.0f/s ", elapsed, Double(figures.sent) / elapsed)
                    + "\(memory.map(\.description) ?? "rss=?") stray_files=\(stray.count)")
        }

        @Test("each contract method with every wrong argument type is answered InvalidArgs")
        func wrongTypes() async throws {
            let fixture = try await ServiceFixture()
            let client = ServiceClient(connection: try fixture.connect())
            defer { client.connection.close() }
            let samples: [DBusValue] = [
                .byte(1), .boolean(true), .int16(1), .uint16(1), .int32(1), .uint32(1), .int64(1), .uint64(1), .double(1),
                .string("com.example.App"), .objectPath("/a"), .signature("s"), .bytes([1]), .stringArray(["a"]),
                .array(element: "{sv}", [.dictEntry(.string("k"), .variant(.int32(1)))]),
                .array(element: "{is}", [.dictEntry(.int32(1), .string("v"))]), .structure([.int32(1)]), .structure([.double(1)]),
                .variant(.string("x")),
            ]
            var calls = 0
            for method in PreferencesMethod.allCases {
                let valid: [DBusValue] =
                    switch method.inputSignature {
                    case "ss": [.string("com.example.App"), .string("k")]
                    case "ssv": [.string("com.example.App"), .string("k"), .variant(.int32(1))]
                    case "": []
                    case "s": [.string("com.example.App")]
                    case "sa{sv}as": [.string("com.example.App"), ServiceClient.values([:]), .stringArray([])]
                    case "sa{sv}": [.string("com.example.App"), ServiceClient.values([:])]
                    default: [.stringArray(["com.example.App"]), .string("k")]
                    }
                var bodies: [[DBusValue]] = []
                for position in valid.indices {
                    for sample in samples where sample.signature != valid[position].signature {
                        var body = valid
                        body[position] = sample
                        bodies.append(body)
                    }
                }
                bodies.append(valid + [.int32(1)])
                if !valid.isEmpty { bodies.append(Array(valid.dropLast())) }
                for body in bodies {
                    calls += 1
                    let refusal = await client.refusal(method.rawValue, body)
                    #expect(
                        refusal == StandardErrorName.invalidArgs, "\(method.rawValue)(\(body.map(\.signature.rawValue).joined())) → \(refusal ?? "success")")
                }
            }
            // Right signature, a value the contract does not map: InvalidValue.
            let unmapped: [DBusValue] = [
                .objectPath("/a"), .signature("s"), .structure([.int32(1), .int32(2)]),
                .array(element: "{is}", [.dictEntry(.int32(1), .string("v"))]), .uint64(.max),
                .array(element: "o", [.objectPath("/a")]),
            ]
            for value in unmapped {
                calls += 1
                let refusal = await client.refusal("Write", [.string("com.example.App"), .string("k"), .variant(value)])
                #expect(refusal == PreferencesErrorName.invalidValue.busName, "Write of \(value.signature.rawValue) → \(refusal ?? "success")")
            }
            #expect(fixture.isRunning)
            print("reliability.fuzz.wrong_types calls=\(calls) all_refused_with_the_right_error=true")
        }

        @Test("a NUL inside a string is refused by the client before it is sent")
        func nulRefusedByClient() async throws {
            let fixture = try await ServiceFixture()
            let connection = try fixture.connect()
            defer { connection.close() }
            for body: [DBusValue] in [[.string("com.example\u{0}App"), .string("k")], [.string("com.example.App"), .string("k\u{0}ey")]] {
                let message = DBusMessage.methodCall(
                    destination: PreferencesBus.busName, path: PreferencesBus.objectPath,
                    interface: PreferencesBus.interface, member: "Read", body: body)
                #expect(throws: DBusError.self) { try connection.send(message) }
                await #expect(throws: DBusError.self) { _ = try await connection.call(message) }
            }
            try await fixture.ping(connection)
        }

        /// Sends `value` as the value of a Write and returns the error it is refused with.
        static func hugeWrite(_ connection: DBusConnection, _ value: DBusValue) async -> String {
            do {
                _ = try await connection.call(
                    .methodCall(
                        destination: PreferencesBus.busName, path: PreferencesBus.objectPath, interface: PreferencesBus.interface,
                        member: "Write", body: [.string("com.example.Huge"), .string("k"), .variant(value)]
                    ), timeout: .seconds(120))
                return "success"
            } catch let error where error.code == .remote {
                return error.name ?? ""
            } catch {
                return "\(error)"
            }
        }

        /// What sending `value` in one Write costs a fresh prefsd: its answer, and how far its
        /// peak RSS grew (MiB). A fresh prefsd per message, so each growth is its own.
        static func hugeWriteCost(_ value: DBusValue) async throws -> (answer: String, growthMiB: Double) {
            let fixture = try await ServiceFixture()
            let connection = try fixture.connect()
            defer { connection.close() }
            try await fixture.ping(connection)
            let baseline = try #require(fixture.memory, "prefsd's /proc status cannot be read").peakKiB
            let answer = await Self.hugeWrite(connection, value)
            #expect(fixture.isRunning, "prefsd died on the message")
            try await fixture.ping(connection)
            let peak = try #require(fixture.memory, "prefsd's /proc status cannot be read: it is gone").peakKiB
            try await ServiceClient(connection: connection).write("com.example.Huge", "small", .integer(1))
            return (answer, Double(peak - baseline) / 1024)
        }

        @Test("huge messages of tiny elements are refused without building them: each costs prefsd little more memory than one flat value of the same size")
        func hugeMessages() async throws {
            // The reference: a flat 30 MiB byte array, decoded as one value and refused by its
            // size. The message itself is read whole either way (up to 32 MiB here, 128 MiB on
            // a session bus); building millions of elements would cost tens of bytes each on top.
            let flat = try await Self.hugeWriteCost(.bytes(Array(repeating: 7, count: 30 << 20)))
            #expect(flat.answer == PreferencesErrorName.quotaExceeded.busName, "ay of 30 MiB → \(flat.answer)")
            print(String(format: "reliability.huge message=\"ay of 30 MiB\" answer=%@ peak_rss_growth=%.1fMiB", flat.answer, flat.growthMiB))
            // The private bus carries messages up to 32 MiB (dbus-daemon's default).
            let cases: [(String, DBusValue)] = [
                ("as of 3.5M empty strings (~28 MiB)", .array(element: "s", Array(repeating: .string(""), count: 3_500_000))),
                ("av of 7M bytes (~28 MiB)", .array(element: "v", Array(repeating: .variant(.byte(1)), count: 7_000_000))),
                ("aay of 3.5M empty arrays (~28 MiB)", .array(element: "ay", Array(repeating: .bytes([]), count: 3_500_000))),
                ("one 30 MiB string", .string(String(repeating: "s", count: 30 << 20))),
            ]
            for (name, value) in cases {
                let cost = try await Self.hugeWriteCost(value)
                let expected = [
                    "org.freedesktop.DBus.Error.LimitsExceeded", PreferencesErrorName.quotaExceeded.busName,
                ]
                #expect(expected.contains(cost.answer), "\(name) → \(cost.answer)")
                #expect(
                    cost.growthMiB < flat.growthMiB + 48, "\(name): prefsd's peak RSS grew by \(cost.growthMiB) MiB, the flat value's by \(flat.growthMiB) MiB")
                print(String(format: "reliability.huge message=\"%@\" answer=%@ peak_rss_growth=%.1fMiB", name, cost.answer, cost.growthMiB))
            }
        }
    }
}
