import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PrefsdTestSupport
import Testing

extension Reliability {
    /// A subscriber that stops reading its socket must not stall prefsd
    /// for everyone else. dbus-daemon keeps every signal queued for it and counts those
    /// bytes against prefsd's allowance (1 GB with Debian's session.conf, which the
    /// private bus copies); unbounded signals filled it after ~960 writes of 1 MiB.
    @Suite("A frozen subscriber")
    struct FrozenSubscriber {
        /// A raw D-Bus client in Debian's python3 (standard library only): authenticates,
        /// says Hello, adds `rule` as a match rule, prints `ready` once both are answered,
        /// and then never reads its socket again.
        static let script = #"""
            import os, socket, struct, sys, time
            path, rule = sys.argv[1], sys.argv[2]
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            s.sendall(b"\0AUTH EXTERNAL " + str(os.getuid()).encode().hex().encode() + b"\r\n")
            line = b""
            while b"\r\n" not in line:
                line += s.recv(1)
            assert line.startswith(b"OK"), line
            s.sendall(b"BEGIN\r\n")
            def call(serial, member, body_sig="", body=b""):
                m = bytearray(b"l\x01\x00\x01") + struct.pack("<II", len(body), serial) + b"\0\0\0\0"
                def align(n):
                    while len(m) % n: m.append(0)
                def field(code, sig, value):
                    align(8); m.extend(bytes([code, len(sig)]) + sig.encode() + b"\0")
                    data = value.encode()
                    if sig == "g":
                        m.extend(bytes([len(data)]) + data + b"\0")
                    else:
                        align(4); m.extend(struct.pack("<I", len(data)) + data + b"\0")
                field(1, "o", "/org/freedesktop/DBus"); field(2, "s", "org.freedesktop.DBus")
                field(3, "s", member); field(6, "s", "org.freedesktop.DBus")
                if body_sig: field(8, "g", body_sig)
                struct.pack_into("<I", m, 12, len(m) - 16)
                align(8)
                return bytes(m) + body
            rule_bytes = rule.encode()
            s.sendall(call(1, "Hello") + call(2, "AddMatch", "s", struct.pack("<I", len(rule_bytes)) + rule_bytes + b"\0"))
            data, returns = b"", 0
            while returns < 2:
                chunk = s.recv(65536)
                if not chunk: sys.exit("bus closed the connection")
                data += chunk
                while len(data) >= 16:
                    body_length, _, fields_length = struct.unpack_from("<III", data, 4)
                    total = 16 + fields_length + (-fields_length % 8) + body_length
                    if len(data) < total: break
                    if data[1] == 3: sys.exit("error reply: " + repr(data[:total]))
                    if data[1] == 2: returns += 1
                    data = data[total:]
            print("ready", flush=True)
            while True:
                time.sleep(3600)
            """#

        /// Runs the frozen subscriber on the fixture's bus and waits until its match rule is in place.
        static func startFrozenSubscriber(_ fixture: ServiceFixture, domain: String) throws -> Process {
            let socketPath = fixture.bus.socketPath
            let process = Process()
            process.environment = helperEnvironment
            process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            process.arguments = ["-c", script, socketPath, PreferencesBus.changedMatchRule(domain: domain)]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let line = Locked<String?>(nil)
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                let text = String(decoding: output.fileHandleForReading.readData(ofLength: 6), as: UTF8.self)
                line.withLock { $0 = text }
                done.signal()
            }
            _ = done.wait(timeout: .now() + 20)
            guard line.withLock({ $0 }) == "ready\n" else {
                stop(process, signal: SIGKILL)
                throw FixtureError("the frozen subscriber did not start (python3 -c …): \(line.withLock { $0 } ?? "no output")")
            }
            return process
        }

        /// How many calls of each kind the test makes.
        struct Counts {
            /// Writes of 1 MiB values (each used to queue a 1 MiB signal).
            let large: Int
            /// Writes of values just under the 4 KiB bound of a signal (sent in full).
            let small: Int
        }

        /// 1,100 large and 10,000 small writes by default: past the ~960 large ones that
        /// stalled the service before. `PREFSD_LONG_TESTS=1` runs the issue's full counts,
        /// 5,000 and 100,000 (minutes in a debug build).
        static let counts = Long.pick(Counts(large: 1_100, small: 10_000), long: Counts(large: 5_000, small: 100_000))

        @Test("a subscriber that never reads: other clients keep being answered, never stalled, through 1 MiB and 4 KiB floods")
        func frozenSubscriber() async throws {
            let fixture = try await ServiceFixture()
            let domain = "com.example.Flood"
            let frozen = try Self.startFrozenSubscriber(fixture, domain: domain)
            defer { stop(frozen, signal: SIGKILL) }

            // A prober: Ping and Read on its own connection, every 50 ms, each bounded by 10 s:
            // the stall this guards against was for good (every call timed out), so the bound
            // only has to outlast a loaded machine; the worst probe's time is printed as a figure.
            let probeConnection = try fixture.connect()
            let probe = ServiceClient(connection: probeConnection)
            defer { probeConnection.close() }
            try await probe.write("com.example.Other", "k", .integer(7))
            let probes = Locked((count: 0, worstMs: 0.0, failures: [String]()))
            let prober = Task {
                while !Task.isCancelled {
                    let started = ContinuousClock.now
                    do {
                        try await fixture.ping(probeConnection, timeout: .seconds(10))
                        _ = try await probeConnection.call(
                            .methodCall(
                                destination: PreferencesBus.busName, path: PreferencesBus.objectPath, interface: PreferencesBus.interface,
                                member: "Read", body: [.string("com.example.Other"), .string("k")]), timeout: .seconds(10))
                        let elapsed = milliseconds(since: started)
                        probes.withLock {
                            $0.count += 1; $0.worstMs = max($0.worstMs, elapsed)
                        }
                    } catch {
                        probes.withLock { $0.failures.append("\(error)") }
                    }
                    try? await Task.sleep(for: .milliseconds(50))
                }
            }

            let started = ContinuousClock.now
            let large = PropertyListValue.data(Data(repeating: 0, count: (1 << 20) - 16))
            let unanswered = Locked(0)
            // Writers on 4 connections; every write changes the value, so each one emits a signal.
            func flood(_ count: Int, value: @escaping @Sendable (Int) -> PropertyListValue) async throws {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for writer in 0..<4 {
                        let connection = try fixture.connect()
                        group.addTask {
                            defer { connection.close() }
                            for index in stride(from: writer, to: count, by: 4) {
                                do {
                                    _ = try await connection.call(
                                        .methodCall(
                                            destination: PreferencesBus.busName, path: PreferencesBus.objectPath, interface: PreferencesBus.interface,
                                            member: "Write", body: [.string(domain), .string("key\(writer)"), value(index).dbusVariant]), timeout: .seconds(10))
                                } catch {
                                    unanswered.withLock { $0 += 1 }
                                    if unanswered.withLock({ $0 }) > 20 { return }
                                }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
            try await flood(Self.counts.large) { index in
                var bytes = [UInt8](repeating: 0, count: 8)
                withUnsafeBytes(of: Int64(index).littleEndian) { bytes = Array($0) }
                guard case .data(var data) = large else { return large }
                data.replaceSubrange(0..<8, with: bytes)
                return .data(data)
            }
            let largeSeconds = milliseconds(since: started) / 1000
            try await flood(Self.counts.small) { index in
                .data(Data(repeating: UInt8(truncatingIfNeeded: index), count: 3_900))
            }
            prober.cancel()
            _ = await prober.value

            // The end: prefsd answers at once, and the frozen subscriber is still connected.
            try await fixture.ping(probe.connection)
            #expect(try await probe.readValue("com.example.Other", "k") == .integer(7))
            #expect(frozen.isRunning)
            let (count, worst, failures) = probes.withLock { ($0.count, $0.worstMs, $0.failures) }
            #expect(unanswered.withLock { $0 } == 0, "writes left unanswered")
            #expect(failures.isEmpty, "probes not answered within 10 s: \(failures.prefix(5))")
            #expect(count > 0)
            print(
                String(
                    format:
                        "reliability.frozen_subscriber large_writes=%d (1 MiB) small_writes=%d (3900 B) unanswered=%d probes=%d probe_failures=%d worst_probe_ms=%.0f large_phase_s=%.1f total_s=%.1f %@",
                    Self.counts.large, Self.counts.small, unanswered.withLock { $0 }, count, failures.count, worst,
                    largeSeconds, milliseconds(since: started) / 1000, fixture.memory.map(String.init(describing:)) ?? ""))
        }
    }
}
