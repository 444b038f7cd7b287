import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PrefsdTestSupport
import Testing

/// Builds hostile messages from random and malformed parts.
struct MessageFuzzer {
    var random: SeededGenerator

    /// Names made to escape the store directory carry this marker, so the test can look for
    /// any file that got created from them.
    static let marker = "fuzzmark"

    static let hostileNames: [String] = [
        "", "/", "..", ".", "../\(marker)", "../../\(marker)", "/tmp/\(marker)", "\(marker)/..", "a/b", "\(marker)/x",
        ".hidden", "-dash", "com.example.Fuzz", "NSGlobalDomain", "com.exämple.App", "日本語.設定", "emoji😀",
        "\u{202E}rtl", "tab\there", "line\nbreak", "\u{1}\u{7F}", "a\u{0301}", "\u{FEFF}bom", "%s%n%x",
        "'; DROP TABLE preference; --", String(repeating: "x", count: 255), String(repeating: "y", count: 256),
        String(repeating: "k", count: 1024), String(repeating: "é", count: 600), "com.example.\(marker)",
        "store.sqlite", "lock", "../store/store.sqlite",
    ]

    static let members =
        PreferencesMethod.allCases.map(\.rawValue) + ["read", "Write2", "", "Ping", "Get", "Introspect", "X" + String(repeating: "y", count: 200)]
    static let interfaces: [String?] = [
        PreferencesBus.interface, nil, "io.github.prefsd.Preferences2", "org.example.Nothing",
        StandardInterface.properties, StandardInterface.introspectable, StandardInterface.peer,
    ]
    static let paths = [
        PreferencesBus.objectPath, "/", "/io/github/prefsd", "/io/github/prefsd/Preferences1/child", "/org/example", "/\(marker)",
    ]

    init(seed: UInt64) { random = SeededGenerator(seed: seed) }

    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }
    mutating func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &random)] }

    mutating func string() -> String {
        if chance(50) { return pick(Self.hostileNames) }
        let alphabet = Array("abcXYZ09._-/ é日😀\u{202E}\u{0301}\t")
        return String((0..<Int.random(in: 0...24, using: &random)).map { _ in pick(alphabet) })
    }

    /// A random single complete type, at most `depth` containers deep.
    mutating func type(depth: Int) -> String {
        let basics = ["y", "b", "n", "q", "i", "u", "x", "t", "d", "s", "o", "g"]
        guard depth > 0, chance(35) else { return pick(basics) }
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return "a" + type(depth: depth - 1)
        case 1: return "a{" + pick(["s", "i", "y", "o"]) + type(depth: depth - 1) + "}"
        case 2: return "(" + (0..<Int.random(in: 1...3, using: &random)).map { _ in type(depth: depth - 1) }.joined() + ")"
        default: return "v"
        }
    }

    /// A random value of the single complete type `signature`.
    mutating func value(of signature: Substring, depth: Int) -> DBusValue {
        switch signature.first {
        case "y": return .byte(.random(in: 0...255, using: &random))
        case "b": return .boolean(chance(50))
        case "n": return .int16(.random(in: .min ... .max, using: &random))
        case "q": return .uint16(.random(in: 0 ... .max, using: &random))
        case "i": return .int32(.random(in: .min ... .max, using: &random))
        case "u": return .uint32(.random(in: 0 ... .max, using: &random))
        case "x": return .int64(.random(in: .min ... .max, using: &random))
        case "t": return .uint64(chance(50) ? .max : .random(in: 0 ... .max, using: &random))
        case "d": return .double(pick([.nan, .infinity, -0.0, 1e308, .random(in: -1e9...1e9, using: &random)]))
        case "s": return .string(string())
        case "o": return .objectPath(pick(["/", "/a/b", "/\(Self.marker)", "/io/github/prefsd/Preferences1"]))
        case "g": return .signature(pick(["", "s", "a{sv}", "(ii)", "v"]))
        case "v":
            let inner = depth > 0 ? type(depth: min(depth - 1, 3)) : "s"
            return .variant(value(of: Substring(inner), depth: depth - 1))
        case "a":
            let element = signature.dropFirst()
            let count = chance(20) ? 0 : Int.random(in: 1...6, using: &random)
            if element.first == "{" {
                let key = element.dropFirst().prefix(1)
                let valueType = element.dropFirst(2).dropLast()
                return .array(
                    element: DBusSignature(stringLiteral: String(element)),
                    (0..<count).map { _ in
                        .dictEntry(value(of: key, depth: depth - 1), value(of: valueType, depth: depth - 1))
                    })
            }
            if element == "y" { return .bytes((0..<count * 4).map { _ in .random(in: 0...255, using: &random) }) }
            return .array(element: DBusSignature(stringLiteral: String(element)), (0..<count).map { _ in value(of: element, depth: depth - 1) })
        case "(":
            var fields: [DBusValue] = []
            var rest = signature.dropFirst().dropLast()
            while !rest.isEmpty {
                let field = Self.firstCompleteType(rest)
                fields.append(value(of: field, depth: depth - 1))
                rest = rest.dropFirst(field.count)
            }
            return .structure(fields)
        default:
            return .string("?")
        }
    }

    /// The first complete type of a signature.
    static func firstCompleteType(_ signature: Substring) -> Substring {
        var level = 0
        var end = signature.startIndex
        repeat {
            let character = signature[end]
            if character == "(" || character == "{" { level += 1 }
            if character == ")" || character == "}" { level -= 1 }
            end = signature.index(after: end)
            if character == "a", level == 0 { continue }
            if level == 0 { break }
        } while end < signature.endIndex
        return signature[signature.startIndex..<end]
    }

    /// A value for the contract's `v` argument: mostly property-list values, some not.
    mutating func variant() -> DBusValue {
        let types = ["s", "x", "d", "b", "ay", "(d)", "av", "a{sv}", "as", "o", "g", "(ii)", "a{is}", "t", "v"]
        let chosen = chance(70) ? pick(types) : type(depth: 4)
        return .variant(value(of: Substring(chosen), depth: 5))
    }

    /// Containers nested `depth` deep around a string.
    mutating func deep(_ depth: Int) -> DBusValue {
        var value = DBusValue.string("deep")
        let kind = Int.random(in: 0..<3, using: &random)
        for _ in 0..<depth {
            switch kind {
            case 0: value = .variant(value)
            case 1: value = .array(element: DBusSignature(stringLiteral: value.signature.rawValue), [value])
            default: value = .structure([value])
            }
        }
        return value
    }

    /// Arguments of the right types for `method`, with hostile contents.
    mutating func contractBody(_ method: PreferencesMethod) -> [DBusValue] {
        let sv = { (fuzzer: inout MessageFuzzer) -> DBusValue in
            .array(
                element: "{sv}",
                (0..<Int.random(in: 0...4, using: &fuzzer.random)).map { _ in
                    .dictEntry(.string(fuzzer.string()), fuzzer.variant())
                })
        }
        let strings = { (fuzzer: inout MessageFuzzer) -> DBusValue in
            .array(element: "s", (0..<Int.random(in: 0...4, using: &fuzzer.random)).map { _ in .string(fuzzer.string()) })
        }
        switch method.inputSignature {
        case "ss": return [.string(string()), .string(string())]
        case "ssv": return [.string(string()), .string(string()), variant()]
        case "": return []
        case "s": return [.string(string())]
        case "sa{sv}as": return [.string(string()), sv(&self), strings(&self)]
        case "sa{sv}": return [.string(string()), sv(&self)]
        default: return [strings(&self), .string(string())]
        }
    }

    /// What a message is, for checking its answer.
    enum Shape: Sendable {
        case contract(PreferencesMethod, signatureMatches: Bool)
        case unknownMember
        case unknownInterface
        case standard
        case otherPath
        case deep
    }

    /// One hostile message.
    mutating func message() -> (DBusMessage, Shape) {
        let roll = Int.random(in: 0..<100, using: &random)
        var path = PreferencesBus.objectPath
        var interface: String? = PreferencesBus.interface
        var member: String
        var body: [DBusValue]
        let shape: Shape
        switch roll {
        case 0..<45:
            let method = pick(PreferencesMethod.allCases)
            member = method.rawValue
            body = contractBody(method)
            interface = chance(10) ? nil : interface
            shape = .contract(method, signatureMatches: true)
        case 45..<70:
            let method = pick(PreferencesMethod.allCases)
            member = method.rawValue
            body = (0..<Int.random(in: 0...4, using: &random)).map { _ in value(of: Substring(type(depth: 3)), depth: 3) }
            if chance(30) { body = contractBody(method); if body.isEmpty { body = [.int32(1)] } else { body.removeLast() } }
            let matches = body.map(\.signature.rawValue).joined() == method.inputSignature
            shape = .contract(method, signatureMatches: matches)
        case 70..<78:
            member = pick(["read", "Write2", "Nothing", "X" + String(repeating: "y", count: 200), "Set"])
            body = [.string(string())]
            shape = .unknownMember
        case 78..<86:
            interface = pick(["io.github.prefsd.Preferences2", "org.example.Nothing", "io.github.prefsd"])
            member = pick(Self.members.filter { !$0.isEmpty })
            body = contractBody(.write)
            shape = .unknownInterface
        case 86..<92:
            interface = pick([StandardInterface.properties, StandardInterface.introspectable, StandardInterface.peer])
            member = pick(["Get", "Set", "GetAll", "Introspect", "Ping", "GetMachineId", "Nothing"])
            body = (0..<Int.random(in: 0...3, using: &random)).map { _ in
                chance(50) ? .string(pick([PreferencesBus.interface, "Version", string()])) : variant()
            }
            shape = .standard
        case 92..<96:
            path = pick(Array(Self.paths.dropFirst()))
            interface = pick(Self.interfaces)
            member = pick(Self.members.filter { !$0.isEmpty })
            body = contractBody(.write)
            shape = .otherPath
        default:
            member = pick(["Write", "Apply", "Read"])
            let depth = Int.random(in: 30...64, using: &random)
            body = [.string("com.example.Deep"), .string("k"), .variant(deep(depth - 1))]
            shape = .deep
        }
        let message = DBusMessage(
            kind: .methodCall, path: path, interface: interface, member: member,
            destination: PreferencesBus.busName, body: body)
        return (message, shape)
    }

    static let ourErrors = PreferencesErrorName.prefix
    static let standardErrors = "org.freedesktop.DBus.Error."

    /// Why `answer` is the wrong answer to a message of `shape`, or nil when it is right.
    static func wrongAnswer(_ shape: Shape, _ answer: Result<DBusMessage, DBusError>) -> String? {
        let name: String?
        switch answer {
        case .success: name = nil
        case .failure(.remote(name: "org.freedesktop.DBus.Error.LimitsExceeded", message: let message)) where message.hasPrefix("prefsd holds at most"):
            // The door's bound on calls held while prefsd learns who a new connection is
            // (`--max-held-calls`): it answers before any method is looked at, so it is the
            // right answer whatever the message (a loaded machine identifies callers slower,
            // and the fuzzer's reconnecting clients then reach it).
            return nil
        case .failure(.remote(let errorName, _)): name = errorName
        case .failure(let error): return "not a reply: \(error)"
        }
        // The decoder refuses a body nested past its limit, before any method sees it.
        if name == StandardErrorName.invalidArgs || name == "org.freedesktop.DBus.Error.LimitsExceeded" {
            if case .contract(_, true) = shape { return nil }
            if case .contract = shape { return nil }
            if case .deep = shape { return nil }
            if case .standard = shape { return nil }
        }
        switch shape {
        case .contract(_, signatureMatches: true), .deep:
            guard let name else { return nil }
            return name.hasPrefix(ourErrors) ? nil : "\(name) is not an error of the interface"
        case .contract(_, signatureMatches: false):
            return name == StandardErrorName.invalidArgs ? nil : "\(name ?? "success") instead of InvalidArgs"
        case .unknownMember:
            return name == StandardErrorName.unknownMethod ? nil : "\(name ?? "success") instead of UnknownMethod"
        case .unknownInterface:
            return name == StandardErrorName.unknownInterface ? nil : "\(name ?? "success") instead of UnknownInterface"
        case .standard, .otherPath:
            guard let name else { return nil }
            return name.hasPrefix(standardErrors) ? nil : "\(name) is not a standard error"
        }
    }
}

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
            } catch .remote(let name, _) {
                return name
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
