import BenchmarkKit
import BusTestSupport
import DBus
import Foundation

/// `prefs-bench --only-xfconf`: prefsd serving xfconf's protocol (`prefsd --xfconf`) beside
/// Debian's xfconfd, in one run, each on its own private bus with its own
/// `XDG_CONFIG_HOME`. At 10 and at 10,000 properties in the channel, the two sides take turns
/// round by round:
///
/// 1. `GetProperty` of one property;
/// 2. `SetProperty` of one property, to a new value each round (prefsd answers once the
///    change is durable; xfconfd answers at once and writes its file five seconds later);
/// 3. a burst of 1,000 `SetProperty` calls sent without waiting, timed until the last is
///    answered.
struct XfconfBench {
    let quick: Bool

    /// The channel the calls use.
    static let channel = "bench"
    /// The sizes of the channel measured.
    static let sizes = [10, 10_000]
    /// The calls of a burst.
    static let burst = 1_000

    func run() throws {
        let loadBefore = Machine.load
        let work = try makeTemporaryDirectory("prefs-bench-xfconf")
        defer { try? FileManager.default.removeItem(at: work) }
        let prefsdPath = try siblingExecutable("prefsd")
        let xfconfdPath = try Self.xfconfd()

        // xfconfd on its own bus, with its own configuration folder.
        let xfconfdBus = try PrivateBus()
        defer { xfconfdBus.stop() }
        var xfconfdEnvironment = ProcessInfo.processInfo.environment
        xfconfdEnvironment["XDG_CONFIG_HOME"] = work.appendingPathComponent("xfconfd-config").path
        xfconfdEnvironment["DBUS_SESSION_BUS_ADDRESS"] = xfconfdBus.address
        let xfconfd = try Child(xfconfdPath, [], environment: xfconfdEnvironment, log: work.appendingPathComponent("xfconfd.log"))
        defer { xfconfd.stop() }
        let xfconfdConnection = try DBusConnection.connect(address: xfconfdBus.address)
        defer { xfconfdConnection.close() }

        // prefsd --xfconf on its own bus.
        let prefsdBus = try PrivateBus()
        defer { prefsdBus.stop() }
        let prefsdConnection = try DBusConnection.connect(address: prefsdBus.address)
        defer { prefsdConnection.close() }
        var prefsdEnvironment = ProcessInfo.processInfo.environment
        prefsdEnvironment["XDG_CONFIG_HOME"] = work.appendingPathComponent("prefsd-config").path
        let prefsd = try PrefsdInstance(
            executable: prefsdPath, bus: prefsdBus.address, store: work.appendingPathComponent("store"),
            log: work.appendingPathComponent("prefsd.log"), probe: prefsdConnection, arguments: ["--xfconf"],
            environment: prefsdEnvironment)
        defer { prefsd.stop() }

        let sides = [xfconfdConnection, prefsdConnection]
        for side in sides { try Self.waitForXfconf(side) }

        var table = MarkdownTable(header: ["properties", "call", "xfconfd p50 / p99", "prefsd --xfconf p50 / p99", "prefsd ÷ xfconfd (p50)"])
        var filled = 0
        for size in Self.sizes {
            log("filling both channels to \(size) properties")
            for side in sides {
                try Self.burst(side, (filled..<size).map { Self.set("/fill/p\($0)", Int32($0)) })
            }
            filled = size
            let rounds = quick ? 100 : 500
            log("GetProperty and SetProperty at \(size) properties: \(rounds) rounds")
            var gets = [[Double](), [Double]()]
            var sets = [[Double](), [Double]()]
            for round in 0...rounds {
                for side in DconfBench.order(round) {
                    let get = try sides[side].timed(Self.call("GetProperty", [.string(Self.channel), .string("/fill/p0")]))
                    let set = try sides[side].timed(Self.set("/bench/w", Int32(round)))
                    // The first round warms both services.
                    if round > 0 { (gets[side], sets[side]) = (gets[side] + [get], sets[side] + [set]) }
                }
            }
            let burstRounds = quick ? 3 : 7
            log("bursts of \(Self.burst) SetProperty at \(size) properties: \(burstRounds) rounds")
            var bursts = [[Double](), [Double]()]
            for round in 0...burstRounds {
                for side in DconfBench.order(round) {
                    let calls = (0..<Self.burst).map { Self.set("/burst/b\($0 % 10)", Int32(round * Self.burst + $0)) }
                    let start = now()
                    try Self.burst(sides[side], calls)
                    if round > 0 { bursts[side].append(now() - start) }
                }
            }
            for (name, samples) in [("GetProperty", gets), ("SetProperty", sets), ("\(Self.burst.formatted()) SetProperty sent at once", bursts)] {
                let figures = samples.map { Figure($0) }
                let ratio = (figures[1].summary?.median).flatMap { prefsd in figures[0].summary.map { prefsd / $0.median } }
                table.add(["\(size.formatted())", name, figures[0].countedText, figures[1].countedText, ratio.map(Format.ratio) ?? "–"])
            }
        }
        print(
            "Machine: \(Machine.description).  \nLoad: \(loadBefore) before, \(Machine.load) after (1/5/15-minute load averages).  \nRun: \(quick ? "`--quick`" : "full"); xfconfd and prefsd each on its own private dbus-daemon, taking turns round by round; prefsd answers a change once it is durable, xfconfd at once (it writes its file 5 s later).\n"
        )
        print(table.render())
    }

    /// `SetProperty(channel, property, <int32 value>)`.
    static func set(_ property: String, _ value: Int32) -> DBusMessage {
        call("SetProperty", [.string(channel), .string(property), .variant(.int32(value))])
    }

    /// A call of xfconf's interface.
    static func call(_ member: String, _ body: [DBusValue]) -> DBusMessage {
        .methodCall(destination: "org.xfce.Xfconf", path: "/org/xfce/Xfconf", interface: "org.xfce.Xfconf", member: member, body: body)
    }

    /// Sends `calls` without waiting between them and waits until every one is answered;
    /// throws the first error answered.
    static func burst(_ connection: DBusConnection, _ calls: [DBusMessage]) throws {
        guard !calls.isEmpty else { return }
        try blocking {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for call in calls { group.addTask { _ = try await connection.call(call, timeout: .seconds(300)) } }
                try await group.waitForAll()
            }
        }
    }

    /// Waits (at most 20 s) until `org.xfce.Xfconf` answers `ListChannels` on `connection`'s bus.
    static func waitForXfconf(_ connection: DBusConnection) throws {
        let deadline = now() + 20
        while (try? connection.callBlocking(call("ListChannels", []), timeout: .seconds(2))) == nil {
            guard now() < deadline else { throw BenchError("org.xfce.Xfconf did not answer within 20 s") }
            usleep(2000)
        }
    }

    /// Debian's xfconfd, in the machine's multiarch library folder.
    static func xfconfd() throws -> String {
        let lib = "/usr/lib"
        let triplets = (try? FileManager.default.contentsOfDirectory(atPath: lib)) ?? []
        guard let found = triplets.map({ "\(lib)/\($0)/xfce4/xfconf/xfconfd" }).first(where: FileManager.default.isExecutableFile(atPath:))
        else { throw BenchError("Debian's xfconfd is not installed (package xfconf): scripts/install-dependencies bench") }
        return found
    }
}
