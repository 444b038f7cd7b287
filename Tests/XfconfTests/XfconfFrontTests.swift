import Foundation
import PreferencesModel
import PrefsdTestSupport
import Testing

/// prefsd serving xfconf's name, used through Debian's Xfce 4.18 tools: `xfconf-query` and
/// libxfconf print the same with prefsd as with Debian's xfconfd, each call gets xfconfd's
/// answer or error, and a change through either interface is seen through the other.
@Suite("prefsd as xfconfd, through xfconf-query and libxfconf", .serialized)
struct XfconfFrontTests {
    /// A channel no package installs a system file for (xfconfd always reads the machine's
    /// `/etc/xdg`).
    static let channel = "prefsd-test"

    /// Every `-t` type of xfconf-query 4.18 with a value of it: `float` is refused by
    /// libxfconf itself, and `int16`/`uint16` reach the daemon as 0 (libxfconf 4.18 converts
    /// them wrongly), whichever daemon serves.
    static let typedValues: [(type: String, value: String)] = [
        ("bool", "true"), ("int", "-5"), ("uint", "7"), ("int64", "-9000000000"), ("uint64", "18000000000000000000"),
        ("double", "2.5"), ("string", "hello world"), ("uchar", "200"), ("char", "-3"), ("int16", "-300"), ("uint16", "60000"),
        ("float", "1.5"),
    ]

    /// What xfconf-query prints for `commands`, one block per command (its arguments, exit
    /// status, output and error output, the pids and times of GLib's warnings left out).
    static func transcript(_ server: XfconfServer, _ commands: [[String]]) throws -> String {
        var text = ""
        for arguments in commands {
            let result = try server.query(arguments)
            let stderr = result.stderr.split(separator: "\n").map { line in
                line.replacing(/\(xfconf-query:\d+\)/, with: "(xfconf-query)").replacing(/\d\d:\d\d:\d\d\.\d+/, with: "TIME")
            }
            text += "$ xfconf-query \(arguments.joined(separator: " "))\nstatus \(result.status)\n\(result.stdout)"
            text += stderr.map { "stderr: \($0)\n" }.joined()
        }
        return text
    }

    /// The same commands' transcripts under prefsd and under Debian's xfconfd.
    static func bothTranscripts(_ commands: [[String]]) async throws -> (prefsd: String, xfconfd: String) {
        let prefsd = try await XfconfServer(.prefsd)
        let xfconfd = try await XfconfServer(.xfconfd)
        return (try transcript(prefsd, commands), try transcript(xfconfd, commands))
    }

    @Test("xfconf-query sets and reads back every -t type and arrays, and lists them, as under Debian's xfconfd")
    func everyType() async throws {
        let c = Self.channel
        var commands: [[String]] = []
        for (type, value) in Self.typedValues {
            commands.append(["-c", c, "-p", "/types/\(type)", "-n", "-t", type, "-s", value])
            commands.append(["-c", c, "-p", "/types/\(type)"])
        }
        commands += [
            [
                "-c", c, "-p", "/arrays/mixed", "-n", "-a", "-t", "int", "-s", "1", "-t", "string", "-s", "x y", "-t", "uint", "-s", "4",
                "-t", "bool", "-s", "false", "-t", "double", "-s", "0.25", "-t", "uint64", "-s", "7", "-t", "int64", "-s", "-7",
                "-t", "uchar", "-s", "9",
            ],
            ["-c", c, "-p", "/arrays/mixed"],
            ["-c", c, "-p", "/arrays/strings", "-n", "-a", "-t", "string", "-s", "a", "-t", "string", "-s", "b"],
            ["-c", c, "-p", "/arrays/strings"],
            // An existing property takes a new value of its own type, or of the type given.
            ["-c", c, "-p", "/types/int", "-s", "42"],
            ["-c", c, "-p", "/types/int"],
            ["-c", c, "-p", "/types/int", "-t", "string", "-s", "now text"],
            ["-c", c, "-p", "/types/int"],
            ["-c", c, "-p", "/arrays/strings", "-a", "-s", "c"],
            ["-c", c, "-p", "/arrays/strings"],
            ["-c", c, "-l"],
            ["-c", c, "-l", "-v"],
            ["-c", c, "-l", "-p", "/arrays"],
            // Reading what is not there, and names xfconfd refuses.
            ["-c", c, "-p", "/types/missing"],
            ["-c", c, "-p", "/types/missing", "-s", "1"],
            ["-c", c, "-p", "/bad name", "-n", "-t", "int", "-s", "1"],
            ["-c", c, "-p", "/types/", "-n", "-t", "int", "-s", "1"],
            ["-c", "bad channel", "-p", "/a", "-n", "-t", "int", "-s", "1"],
            ["-c", "other-\(c)", "-p", "/a"],
            ["-c", "other-\(c)", "-l"],
        ]
        let (prefsd, xfconfd) = try await Self.bothTranscripts(commands)
        #expect(prefsd == xfconfd)
        // Not vacuous: the values were read back.
        #expect(prefsd.contains("-9000000000\n") && prefsd.contains("18000000000000000000\n") && prefsd.contains("hello world\n"), "\(prefsd)")
    }

    @Test("xfconf-query -r and -r -R reset a property and a branch, and -m reports every set and reset, as under Debian's xfconfd")
    func resetAndMonitor() async throws {
        let c = Self.channel
        var outputs: [XfconfServer.Daemon: String] = [:]
        for daemon in [XfconfServer.Daemon.prefsd, .xfconfd] {
            let server = try await XfconfServer(daemon)
            let monitor = try Monitor(server, channel: c)
            defer { monitor.stop() }
            // Branch names longer than one character: xfconfd 4.18 takes a one-character branch
            // for the channel's root when it names a property for PropertyRemoved (`/a/b/c`
            // is sent as `/c`).
            let commands: [[String]] = [
                ["-c", c, "-p", "/branch/one", "-n", "-t", "int", "-s", "1"],
                ["-c", c, "-p", "/branch/two", "-n", "-t", "string", "-s", "zwei"],
                ["-c", c, "-p", "/branch/sub/three", "-n", "-t", "bool", "-s", "true"],
                ["-c", c, "-p", "/keep", "-n", "-t", "uint", "-s", "3"],
                ["-c", c, "-p", "/branch/one", "-s", "11"],
                ["-c", c, "-p", "/branch/one", "-r"],
                ["-c", c, "-p", "/branch/one"],
                ["-c", c, "-p", "/branch/one", "-r"],
                ["-c", c, "-p", "/branch", "-r", "-R"],
                ["-c", c, "-l", "-v"],
                ["-c", c, "-p", "/branch", "-r", "-R"],
            ]
            let transcript = try Self.transcript(server, commands)
            #expect(try server.query(["-c", c, "-p", "/sentinel", "-n", "-t", "int", "-s", "1"]).status == 0)
            #expect(monitor.waitFor("set: /sentinel (1)"), "\(daemon): \(monitor.text)")
            // A recursive reset reports its properties in the order of xfconfd's tree, which
            // prefsd does not keep: the monitor's lines are compared sorted.
            outputs[daemon] = transcript + monitor.text.split(separator: "\n").sorted().joined(separator: "\n")
        }
        #expect(outputs[.prefsd] == outputs[.xfconfd])
        #expect(outputs[.prefsd]?.contains("reset: /branch/sub/three") == true, "\(outputs[.prefsd] ?? "")")
    }

    @Test("libxfconf through PyGObject: typed setters and getters, string lists, properties, reset, as under Debian's xfconfd")
    func libxfconf() async throws {
        let script = """
            import gi
            gi.require_version('Xfconf', '0')
            from gi.repository import Xfconf, GObject
            def value(gtype, content):
                boxed = GObject.Value(gtype)
                boxed.set_value(content)
                return boxed
            Xfconf.init()
            c = Xfconf.Channel.get('\(Self.channel)')
            print(c.set_int('/py/int', -4), c.set_uint('/py/uint', 4), c.set_uint64('/py/u64', 2**63 + 1), c.set_double('/py/d', 0.125))
            print(c.set_bool('/py/b', True), c.set_string('/py/s', 'text'))
            print(c.set_arrayv('/py/list', [value(GObject.TYPE_STRING, 'a'), value(GObject.TYPE_STRING, 'b c')]))
            print(c.set_arrayv('/py/mixed', [value(GObject.TYPE_INT, -3), value(GObject.TYPE_UINT, 4), value(GObject.TYPE_BOOLEAN, True),
                                             value(GObject.TYPE_DOUBLE, 0.5), value(GObject.TYPE_STRING, 'x')]))
            print(c.get_int('/py/int', 0), c.get_uint('/py/uint', 0), c.get_uint64('/py/u64', 0), c.get_double('/py/d', 0))
            print(c.get_bool('/py/b', False), c.get_string('/py/s', ''), c.get_string_list('/py/list'), c.get_arrayv('/py/mixed'))
            print(c.get_int('/py/missing', 99), c.has_property('/py/int'), c.has_property('/py/missing'), c.is_property_locked('/py/int'))
            print(sorted(c.get_properties('/py').keys()))
            print(sorted(c.get_properties('/').keys()))
            c.reset_property('/py/int', False)
            print(c.has_property('/py/int'), c.get_int('/py/int', 7))
            c.reset_property('/py', True)
            print(c.has_property('/py/s'), sorted(c.get_properties('/').keys()))
            Xfconf.shutdown()
            """
        var outputs: [XfconfServer.Daemon: String] = [:]
        for daemon in [XfconfServer.Daemon.prefsd, .xfconfd] {
            let server = try await XfconfServer(daemon)
            // A property outside /py: a reset of /py leaves it.
            #expect(try server.query(["-c", Self.channel, "-p", "/other", "-n", "-t", "int", "-s", "1"]).status == 0)
            let result = try server.python(script)
            #expect(result.status == 0, "\(daemon): \(result.stderr)")
            outputs[daemon] = result.stdout
        }
        #expect(outputs[.prefsd] == outputs[.xfconfd])
        #expect(outputs[.prefsd]?.contains("-4 4 9223372036854775809 0.125") == true, "\(outputs[.prefsd] ?? "")")
    }

    /// Calls whose answers prefsd and xfconfd give alike (names of errors; xfconfd's messages
    /// for empty names are a bug report's, prefsd's say what is missing).
    static let calls = [
        #"SetProperty ("ch", "/a/b", <int32 5>)"#,
        #"SetProperty ("ch", "/x", <[<int32 1>, <"s">, <uint32 7>, <int64 -9>, <uint64 9>, <1.5>, <true>, <byte 3>]>)"#,
        #"SetProperty ("ch", "/e", <@av []>)"#,
        #"SetProperty ("ch", "/u", <uint32 4>)"#,
        #"SetProperty ("ch", "/u", <int32 4>)"#,
        #"GetProperty ("ch", "/u")"#,
        #"GetProperty ("ch", "/a/b")"#, #"GetProperty ("ch", "/x")"#, #"GetProperty ("ch", "/e")"#,
        #"GetProperty ("ch", "/a")"#, #"GetProperty ("nochannel", "/a")"#, #"GetProperty ("", "/a")"#, #"GetProperty ("ch", "")"#,
        #"GetProperty ("ch", "/")"#, #"GetProperty ("ch", "a")"#, #"GetProperty ("ch", "/a//b")"#, #"GetProperty ("ch", "/a/")"#,
        #"GetProperty ("ch", "/a b")"#, #"GetProperty ("c h", "/a")"#, #"GetProperty ("ch/x", "/a")"#,
        #"SetProperty ("ch", "/", <1>)"#, #"SetProperty ("ch", "", <1>)"#, #"SetProperty ("", "/a", <1>)"#,
        #"SetProperty ("ch", "/a/b/", <1>)"#,
        #"GetAllProperties ("ch", "")"#, #"GetAllProperties ("ch", "/")"#, #"GetAllProperties ("ch", "/a")"#,
        #"GetAllProperties ("ch", "/a/b")"#, #"GetAllProperties ("ch", "/nope")"#, #"GetAllProperties ("ch", "nope")"#,
        #"GetAllProperties ("nochannel", "/")"#, #"GetAllProperties ("", "/")"#,
        #"PropertyExists ("nochannel", "/a")"#, #"PropertyExists ("", "/a")"#, #"PropertyExists ("ch", "")"#,
        #"PropertyExists ("ch", "/")"#, #"PropertyExists ("ch", "/a")"#, #"PropertyExists ("ch", "/a/b")"#,
        #"IsPropertyLocked ("nochannel", "/a")"#, #"IsPropertyLocked ("", "/a")"#, #"IsPropertyLocked ("ch", "")"#,
        #"IsPropertyLocked ("ch", "/")"#, #"IsPropertyLocked ("ch", "/a/b")"#,
        #"ResetProperty ("ch", "/", false)"#, #"ResetProperty ("ch", "", false)"#, #"ResetProperty ("ch", "", true)"#,
        #"ResetProperty ("", "/a", false)"#, #"ResetProperty ("nochannel", "/a", false)"#, #"ResetProperty ("ch", "/nope", false)"#,
        #"ResetProperty ("ch", "/nope", true)"#, #"ResetProperty ("nochannel", "/", true)"#, #"ResetProperty ("ch", "/a", false)"#,
        #"ResetProperty ("ch", "/a", true)"#, #"GetProperty ("ch", "/a/b")"#, #"ResetProperty ("ch", "/x", false)"#,
        #"GetAllProperties ("ch", "/")"#,
    ]

    @Test("each call answered as Debian's xfconfd answers it: values, and the names of its errors")
    func answersAsXfconfd() async throws {
        let prefsd = try await XfconfServer(.prefsd)
        let xfconfd = try await XfconfServer(.xfconfd)
        let mine = try prefsd.call(Self.calls), theirs = try xfconfd.call(Self.calls)
        #expect(mine.count == Self.calls.count)
        for (index, line) in mine.enumerated() where index < theirs.count {
            #expect(line == theirs[index])
        }
        #expect(mine.contains(#"GetProperty ("ch", "/a/b") => ok (<5>,)"#), "\(mine)")
    }

    @Test("int16, uint16 and byte keep their types; an array of strings comes back as av; channels differing in case are two")
    func beyondXfconfd() async throws {
        let server = try await XfconfServer(.prefsd)
        let answers = try server.call([
            #"SetProperty ("ch", "/n", <int16 -3>)"#, #"GetProperty ("ch", "/n")"#,
            #"SetProperty ("ch", "/q", <uint16 3>)"#, #"GetProperty ("ch", "/q")"#,
            #"SetProperty ("ch", "/y", <byte 3>)"#, #"GetProperty ("ch", "/y")"#,
            #"SetProperty ("ch", "/arr", <[<int16 -1>, <uint16 1>]>)"#, #"GetProperty ("ch", "/arr")"#,
            #"SetProperty ("ch", "/as", <["a", "b"]>)"#, #"GetProperty ("ch", "/as")"#,
            #"SetProperty ("Ch", "/n", <1>)"#, #"GetProperty ("ch", "/n")"#, #"GetProperty ("Ch", "/n")"#,
        ])
        #expect(
            answers == [
                #"SetProperty ("ch", "/n", <int16 -3>) => ok ()"#, #"GetProperty ("ch", "/n") => ok (<int16 -3>,)"#,
                #"SetProperty ("ch", "/q", <uint16 3>) => ok ()"#, #"GetProperty ("ch", "/q") => ok (<uint16 3>,)"#,
                #"SetProperty ("ch", "/y", <byte 3>) => ok ()"#, #"GetProperty ("ch", "/y") => ok (<byte 0x03>,)"#,
                #"SetProperty ("ch", "/arr", <[<int16 -1>, <uint16 1>]>) => ok ()"#,
                #"GetProperty ("ch", "/arr") => ok (<[<int16 -1>, <uint16 1>]>,)"#,
                #"SetProperty ("ch", "/as", <["a", "b"]>) => ok ()"#, #"GetProperty ("ch", "/as") => ok (<[<'a'>, <'b'>]>,)"#,
                #"SetProperty ("Ch", "/n", <1>) => ok ()"#, #"GetProperty ("ch", "/n") => ok (<int16 -3>,)"#,
                #"GetProperty ("Ch", "/n") => ok (<1>,)"#,
            ], "\(answers)")
        // The exact type is the store's: prefsd started again gives it back.
        server.service.stopService()
        try await server.service.startService(arguments: ["--xfconf"])
        try await server.waitForXfconfName()
        #expect(try server.call([#"GetProperty ("ch", "/n")"#]) == [#"GetProperty ("ch", "/n") => ok (<int16 -3>,)"#])
    }

    @Test("values xfconf cannot carry, huge values and arrays, long names: xfconfd's errors, nothing changed, and prefsd keeps answering")
    func badInput() async throws {
        let server = try await XfconfServer(.prefsd)
        let long = String(repeating: "a", count: 1100)
        let huge = String(repeating: "x", count: 2 << 20)
        let bigArray = "<[" + Array(repeating: "<int32 1>", count: 200_000).joined(separator: ", ") + "]>"
        let fineArray = "<[" + Array(repeating: "<int32 1>", count: 50_000).joined(separator: ", ") + "]>"
        let answers = try server.call([
            #"SetProperty ("ch", "/s", <(1, 2)>)"#, #"SetProperty ("ch", "/s", <{"a": <1>}>)"#, #"SetProperty ("ch", "/s", <@ay [1, 2]>)"#,
            #"SetProperty ("ch", "/s", <objectpath "/o">)"#, #"SetProperty ("ch", "/s", <[<(1, 2)>]>)"#,
            #"SetProperty ("ch", "/s", <[<[<1>]>]>)"#, #"SetProperty ("ch", "/s", <<<1>>>)"#, #"SetProperty ("ch", "/s", <@ai [1]>)"#,
            #"SetProperty ("ch", "/\#(long)", <1>)"#, #"SetProperty ("\#(long)", "/a", <1>)"#, #"SetProperty ("a:b", "/a", <1>)"#,
            #"SetProperty ("ch", "/huge", <"\#(huge)">)"#, #"SetProperty ("ch", "/big", \#(bigArray))"#,
            #"GetAllProperties ("ch", "/")"#,
            #"SetProperty ("ch", "/fine", \#(fineArray))"#, #"SetProperty ("ch", "/v", <<5>>)"#, #"GetProperty ("ch", "/v")"#,
        ])
        let outcomes = answers.map { $0.split(separator: " => ").last.map(String.init) ?? $0 }
        #expect(Array(outcomes.prefix(8)) == Array(repeating: "error org.xfce.Xfconf.Error.InternalError", count: 8), "\(outcomes)")
        #expect(
            Array(outcomes.dropFirst(8).prefix(5)) == [
                "error org.xfce.Xfconf.Error.InvalidProperty", "error org.xfce.Xfconf.Error.InvalidChannel",
                "error org.xfce.Xfconf.Error.InvalidChannel", "error org.xfce.Xfconf.Error.WriteFailure",
                "error org.xfce.Xfconf.Error.WriteFailure",
            ], "\(outcomes)")
        #expect(outcomes.dropFirst(13) == ["ok (@a{sv} {},)", "ok ()", "ok ()", "ok (<5>,)"], "\(outcomes)")
        #expect(server.service.isRunning)
        let worded = try server.call([#"SetProperty ("ch", "/s", <(1, 2)>)"#], messages: true)
        #expect(worded.first?.contains("xfconf cannot carry a value of type (ii)") == true, "\(worded)")
    }

    @Test("one store: a change through xfconf is prefsd's, in its history by the program, undone through prefsd; prefs write reaches xfconf-query and -m")
    func oneStore() async throws {
        let server = try await XfconfServer(.prefsd)
        let c = Self.channel
        let monitor = try Monitor(server, channel: c)
        defer { monitor.stop() }
        #expect(try server.query(["-c", c, "-p", "/general/size", "-n", "-t", "int", "-s", "12"]).status == 0)
        let read = try server.service.prefs("read", "xfconf.\(c)", "general/size")
        #expect(read.stdout == "12\n", "\(read.stdout)\(read.stderr)")
        // prefs write, through prefsd's own interface: xfconf's clients see it at once.
        #expect(try server.service.prefs("write", "xfconf.\(c)", "general/title", "-string", "from prefs").status == 0)
        #expect(try server.query(["-c", c, "-p", "/general/title"]).stdout == "from prefs\n")
        // A key prefs wrote that names no property, or a value xfconf cannot carry, is not one of the channel's.
        #expect(try server.service.prefs("write", "xfconf.\(c)", "general/data", "-data", "00ff").status == 0)
        #expect(try server.query(["-c", c, "-p", "/general/data"]).status != 0)
        #expect(try server.service.prefs("delete", "xfconf.\(c)", "general/title").status == 0)
        #expect(monitor.waitFor("reset: /general/title\n"), "\(monitor.text)")
        #expect(monitor.text.contains("set: /general/size (12)\nset: /general/title (from prefs)\n"), "\(monitor.text)")
        // The history names the program, and prefsd's undo puts the value back, seen through xfconf.
        #expect(try server.query(["-c", c, "-p", "/general/size", "-s", "13"]).status == 0)
        let history = try server.python(
            """
            from gi.repository import Gio, GLib
            bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
            call = lambda method, args: bus.call_sync('io.github.prefsd.Preferences1', '/io/github/prefsd/Preferences1',
                'io.github.prefsd.Preferences1', method, args, None, Gio.DBusCallFlags.NONE, 20000, None).unpack()
            entries = call('History', GLib.Variant('(sstu)', ('xfconf.\(c)', 'general/size', 0, 100)))[0]
            for entry in entries: print(entry[0], entry[3], entry[4])
            call('RevertKeyTo', GLib.Variant('(sst)', ('xfconf.\(c)', 'general/size', entries[0][0])))
            """)
        #expect(history.status == 0, "\(history.stderr)")
        #expect(
            history.stdout.split(separator: "\n").map { $0.split(separator: " ").dropFirst().joined(separator: " ") } == [
                "general/size xfconf-query", "general/size xfconf-query",
            ], "\(history.stdout)")
        #expect(try server.query(["-c", c, "-p", "/general/size"]).stdout == "12\n")
        #expect(monitor.waitFor("set: /general/size (13)\nset: /general/size (12)\n"), "\(monitor.text)")
    }

    @Test("an administrator's channel file's values are answered with their own types, also once a user's value is reset over them")
    func administratorTypes() async throws {
        let server = try await XfconfServer(.prefsd)
        let folder = server.service.systemConfigDirectory.appendingPathComponent("xfce4/xfconf/xfce-perchannel-xml")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = """
            <?xml version="1.0" encoding="UTF-8"?>

            <channel name="admin-test" version="1.0">
              <property name="count" type="int" value="5"/>
              <property name="list" type="array">
                <value type="uint" value="2"/>
                <value type="int16" value="-1"/>
              </property>
            </channel>

            """
        try file.write(to: folder.appendingPathComponent("admin-test.xml"), atomically: true, encoding: .utf8)
        // prefsd follows the folder: the default is answered once it has read the file.
        let read = [#"GetProperty ("admin-test", "/count")"#]
        let seen = await eventually(timeout: .seconds(20)) { (try? server.call(read))?.first?.hasSuffix("ok (<5>,)") == true }
        #expect(seen, "\((try? server.call(read)) ?? [])")
        let answers = try server.call([
            #"GetProperty ("admin-test", "/list")"#, #"SetProperty ("admin-test", "/count", <uint32 7>)"#,
            #"GetProperty ("admin-test", "/count")"#, #"ResetProperty ("admin-test", "/count", false)"#,
            #"GetProperty ("admin-test", "/count")"#, #"GetAllProperties ("admin-test", "/")"#,
        ])
        #expect(
            answers.map { $0.split(separator: " => ").last.map(String.init) ?? $0 } == [
                "ok (<[<uint32 2>, <int16 -1>]>,)", "ok ()", "ok (<uint32 7>,)", "ok ()", "ok (<5>,)",
                "ok ({'/count': <5>, '/list': <[<uint32 2>, <int16 -1>]>},)",
            ], "\(answers)")
        // libxfconf's typed getter reads an administrator's int as an int (xfce4-session's
        // failsafe session count is one).
        let script = """
            import gi
            gi.require_version('Xfconf', '0')
            from gi.repository import Xfconf
            Xfconf.init()
            print(Xfconf.Channel.get('admin-test').get_int('/count', -1))
            """
        #expect(try server.python(script).stdout == "5\n")
    }

    @Test("a key an administrator forces is locked: IsPropertyLocked says so, SetProperty answers PermissionDenied, a reset leaves it")
    func forcedKeys() async throws {
        let managed = try ServiceFixture.managedDirectory(["xfconf.\(Self.channel)": ["locked/theme": .string("Adwaita")]])
        defer { try? FileManager.default.removeItem(at: managed) }
        let server = try await XfconfServer(.prefsd, arguments: ["--managed-dir", managed.path, "--allow-unowned-managed-dir"])
        let c = Self.channel
        let answers = try server.call([
            #"IsPropertyLocked ("\#(c)", "/locked/theme")"#, #"IsPropertyLocked ("\#(c)", "/locked/other")"#,
            #"GetProperty ("\#(c)", "/locked/theme")"#, #"SetProperty ("\#(c)", "/locked/theme", <"Other">)"#,
            #"ResetProperty ("\#(c)", "/locked/theme", false)"#, #"SetProperty ("\#(c)", "/locked/other", <1>)"#,
            #"ResetProperty ("\#(c)", "/locked", true)"#, #"GetAllProperties ("\#(c)", "/")"#,
        ])
        #expect(
            answers.map { $0.split(separator: " => ").last.map(String.init) ?? $0 } == [
                "ok (true,)", "ok (false,)", "ok (<'Adwaita'>,)", "error org.xfce.Xfconf.Error.PermissionDenied",
                "error org.xfce.Xfconf.Error.PropertyNotFound", "ok ()", "ok ()", "ok ({'/locked/theme': <'Adwaita'>},)",
            ], "\(answers)")
        // xfconf-query does not wait for its set's answer (libxfconf sends it without waiting):
        // the value read back is the forced one.
        _ = try server.query(["-c", c, "-p", "/locked/theme", "-s", "Other"])
        #expect(try server.query(["-c", c, "-p", "/locked/theme"]).stdout == "Adwaita\n")
    }
}

/// `xfconf-query -m -v` on a channel, its output in a file; ready once it has seen a
/// change made after it started.
final class Monitor: Sendable {
    let process: Process
    let output: URL
    /// How much of the output came before it was ready.
    let start: Int

    init(_ server: XfconfServer, channel: String) throws {
        let (process, output) = try startCommand(
            "xfconf-query", ["-c", channel, "-m", "-v"], environment: server.environment, outputIn: server.service.bus.directory)
        (self.process, self.output) = (process, output)
        func seen(_ expected: String, timeout: Double) -> Bool { Self.waitFor(expected, in: output, from: 0, timeout: timeout) }
        var ready = false
        for attempt in 0..<200 where !ready {
            _ = try server.query(["-c", channel, "-p", "/monitor-ready", "-n", "-t", "int", "-s", "\(attempt)"])
            ready = seen("set: /monitor-ready (\(attempt))\n", timeout: 0.05)
        }
        _ = try server.query(["-c", channel, "-p", "/monitor-ready", "-r"])
        guard ready, seen("reset: /monitor-ready\n", timeout: 20) else {
            kill(process.processIdentifier, SIGKILL)
            throw FixtureError("xfconf-query -m did not report a set and a reset")
        }
        start = Self.contents(output).utf8.count
    }

    /// What it printed since it was ready.
    var text: String { String(decoding: Self.contents(output).utf8.dropFirst(start), as: UTF8.self) }

    /// Waits until its output since it was ready holds `expected`.
    func waitFor(_ expected: String, timeout: Double = 20) -> Bool {
        Self.waitFor(expected, in: output, from: start, timeout: timeout)
    }

    private static func contents(_ file: URL) -> String { (try? String(contentsOf: file, encoding: .utf8)) ?? "" }

    private static func waitFor(_ expected: String, in file: URL, from start: Int, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            if String(decoding: contents(file).utf8.dropFirst(start), as: UTF8.self).contains(expected) { return true }
            usleep(10_000)
        } while Date() < deadline
        return false
    }

    /// Kills it (the test process's blocked signals are its too: SIGTERM would not end it).
    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
