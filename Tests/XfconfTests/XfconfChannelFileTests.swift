import Testing
import Xfconf

@Suite("xfconfd's channel files: read as xfconfd reads them, written as it writes them")
struct XfconfChannelFileTests {
    private func file(_ body: String, administrator: Bool = false) throws -> XfconfChannelFile {
        try XfconfChannelFile(
            parsing: Array("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<channel name=\"test\" version=\"1.0\">\n\(body)\n</channel>\n".utf8),
            administrator: administrator)
    }

    private func property(_ path: String) throws -> XfconfProperty { try XfconfProperty(path) }

    @Test("the format's own example reads as its properties, each with its type")
    func specExample() throws {
        let parsed = try file(
            """
            <property name="main" type="empty">
                <property name="allow-editing" type="bool" value="true"/>
                <property name="last-document" type="string" value="foo.txt"/>
            </property>
            <property name="history" type="array">
                <value type="string" value="foo.txt"/>
                <value type="string" value="bar.txt"/>
            </property>
            <property name="random-stuff" type="array">
                <value type="int" value="345"/>
                <value type="double" value="42.4"/>
                <value type="string" value="cheese"/>
            </property>
            """)
        #expect(parsed.channelName == "test")
        #expect(
            parsed.values == [
                try property("/main/allow-editing"): .scalar(.bool(true)),
                try property("/main/last-document"): .scalar(.string("foo.txt")),
                try property("/history"): .array([.string("foo.txt"), .string("bar.txt")]),
                try property("/random-stuff"): .array([.int32(345), .double(42.4), .string("cheese")]),
            ])
        #expect(parsed.skipped.isEmpty)
    }

    @Test(
        "every scalar type reads from its text as xfconfd's strtol family reads it",
        arguments: [
            ("int", "-2147483648", XfconfScalar.int32(Int32.min)), ("int", "0x10", .int32(16)), ("int", "010", .int32(8)),
            ("int", " 5", .int32(5)), ("uint", "4294967295", .uint32(UInt32.max)), ("uchar", "255", .uchar(255)),
            ("char", "-128", .int16(-128)), ("int16", "-32768", .int16(Int16.min)), ("uint16", "65535", .uint16(UInt16.max)),
            ("int64", "-9223372036854775808", .int64(Int64.min)), ("int64", "99999999999999999999", .int64(Int64.max)),
            ("uint64", "18446744073709551615", .uint64(UInt64.max)), ("uint64", "-1", .uint64(UInt64.max)),
            ("double", "0.10000000000000001", .double(0.1)), ("double", "1e300", .double(1e300)), ("double", "-0", .double(-0.0)),
            ("bool", "false", .bool(false)), ("string", "", .string("")), ("string", "a&b", .string("a&b")),
        ])
    func scalarText(type: String, text: String, value: XfconfScalar) {
        #expect(XfconfScalar(fileType: type, text: text) == value)
    }

    @Test(
        "text that is no value of its type is refused, as xfconfd refuses it",
        arguments: [
            ("int", "2147483648"), ("int", "12x"), ("int", ""), ("int", "5 "), ("uint", "-1"), ("uchar", "256"), ("char", "128"),
            ("int16", "32768"), ("uint16", "-1"), ("bool", "True"), ("bool", "1"), ("double", "x"), ("float", "1.5"),
            ("array", ""), ("empty", ""), ("strange", "1"),
        ])
    func scalarRefused(type: String, text: String) {
        #expect(XfconfScalar(fileType: type, text: text) == nil)
    }

    @Test("a property given twice takes the later element, an empty one clearing the value")
    func later() throws {
        let parsed = try file(
            """
            <property name="a" type="int" value="1"/>
            <property name="a" type="string" value="two"/>
            <property name="b" type="int" value="1"/>
            <property name="b" type="empty"/>
            """)
        #expect(parsed.values == [try property("/a"): .scalar(.string("two"))])
    }

    @Test("an array property can hold properties too, after its values")
    func arrayWithChildren() throws {
        let parsed = try file(
            """
            <property name="list" type="array">
              <value type="uint" value="1"/>
              <property name="child" type="uchar" value="7"/>
            </property>
            <property name="empty-list" type="array"/>
            """)
        #expect(
            parsed.values == [
                try property("/list"): .array([.uint32(1)]), try property("/list/child"): .scalar(.uchar(7)),
                try property("/empty-list"): .array([]),
            ])
    }

    @Test(
        "files xfconfd refuses are refused, saying why",
        arguments: [
            ("<property name=\"a\" type=\"int\" value=\"x\"/>", "Unable to parse value"),
            ("<property name=\"a\" type=\"float\" value=\"1.5\"/>", "Invalid type for <property>"),
            ("<property name=\"a\" type=\"int\" value=\"1\" colour=\"red\"/>", "Unknown attribute in <property>"),
            ("<property type=\"int\" value=\"1\"/>", "requires both name and type"),
            ("<property name=\"a\" type=\"int\" value=\"1\"><value type=\"int\" value=\"1\"/></property>", "not allowed inside <property>"),
            ("<value type=\"int\" value=\"1\"/>", "not allowed inside <channel>"),
            ("<property name=\"a\" type=\"array\"><value type=\"array\" value=\"\"/></property>", "cannot be an array"),
            ("<property name=\"a\" type=\"array\"><value type=\"empty\"/></property>", "Invalid type for <value>"),
            (
                "<property name=\"a\" type=\"array\"><value type=\"int\" value=\"1\"><value type=\"int\" value=\"1\"/></value></property>",
                "inside a <value>"
            ),
            ("<property name=\"a\" type=\"int\" value=\"1\" locked=\"alice\"/>", "not allowed in <property> for non-system files"),
            ("<property name=\"a\" type=\"string\" value=\"&unknown;\"/>", "unknown"),
            ("<property name=\"a\" type=\"int\" value=\"1\">", "closed"),
        ])
    func refused(body: String, message: String) {
        #expect {
            try file(body)
        } throws: { error in
            "\(error)".localizedLowercase.contains(message.localizedLowercase)
        }
    }

    @Test(
        "a channel element without a name, of another major version, or locked in a user's file is refused",
        arguments: [
            "<channel version=\"1.0\"/>", "<channel name=\"c\" version=\"2.0\"/>", "<channel name=\"c\" version=\"10\"/>",
            "<channel name=\"c\" version=\"1.0\" locked=\"alice\"/>", "<property name=\"a\" type=\"int\" value=\"1\"/>", "",
            "not markup at all",
        ])
    func channelRefused(text: String) {
        #expect(throws: XfconfError.self) { try XfconfChannelFile(parsing: Array(text.utf8), administrator: false) }
    }

    @Test("another minor version reads")
    func minorVersion() throws {
        let parsed = try XfconfChannelFile(parsing: Array("<channel name=\"c\" version=\"1.7\"/>".utf8), administrator: false)
        #expect(parsed.values.isEmpty)
    }

    @Test("billion laughs: an entity is never expanded, and a file using one does not parse")
    func billionLaughs() {
        var entities = "<!ENTITY lol \"lol\">\n"
        for level in 1...9 {
            let previous = level == 1 ? "lol" : "lol\(level - 1)"
            entities += "<!ENTITY lol\(level) \"" + String(repeating: "&\(previous);", count: 10) + "\">\n"
        }
        let text = """
            <?xml version="1.0"?>
            <!DOCTYPE channel [
            \(entities)]>
            <channel name="c" version="1.0"><property name="a" type="string" value="&lol9;"/></channel>
            """
        #expect(throws: XfconfError.self) { try XfconfChannelFile(parsing: Array(text.utf8), administrator: false) }
    }

    @Test("properties nested past the depth limit are refused; up to it they read")
    func depth() throws {
        func nested(_ levels: Int) -> [UInt8] {
            var text = "<channel name=\"c\" version=\"1.0\">"
            for _ in 0..<levels { text += "<property name=\"p\" type=\"empty\">" }
            text += "<property name=\"leaf\" type=\"int\" value=\"1\"/>"
            for _ in 0..<levels { text += "</property>" }
            return Array((text + "</channel>").utf8)
        }
        let deepest = XfconfChannelFile.maximumDepth - 2
        let parsed = try XfconfChannelFile(parsing: nested(deepest), administrator: false)
        #expect(parsed.values.count == 1)
        #expect {
            try XfconfChannelFile(parsing: nested(10_000), administrator: false)
        } throws: { "\($0)".contains("deeper than") }
    }

    @Test("a property whose name no client can use is left out and named; the rest reads")
    func skipped() throws {
        let parsed = try file(
            """
            <property name="good" type="int" value="1"/>
            <property name="has space" type="int" value="2">
              <property name="below" type="int" value="3"/>
            </property>
            """)
        #expect(parsed.values == [try property("/good"): .scalar(.int32(1))])
        #expect(parsed.skipped == ["/has space", "/has space/below"])
    }

    @Test("an administrator's file says who may change a channel and its properties; unlocked wins over locked")
    func restrictions() throws {
        let text = """
            <channel name="xfwm4" version="1.0" locked="@staff;bob">
              <property name="general" type="empty">
                <property name="theme" type="string" value="Default" unlocked="root" locked="alice"/>
                <property name="title" type="empty" locked="alice"/>
              </property>
            </channel>
            """
        let parsed = try XfconfChannelFile(parsing: Array(text.utf8), administrator: true)
        #expect(parsed.channelRestriction == .locked(XfconfAccessList("@staff;bob")))
        #expect(
            parsed.restrictions == [
                try property("/general/theme"): .unlocked(XfconfAccessList("root")),
                try property("/general/title"): .locked(XfconfAccessList("alice")),
            ])
        #expect(parsed.values == [try property("/general/theme"): .scalar(.string("Default"))])
        #expect(parsed.channelRestriction?.locks(user: "bob", groups: []) == true)
        #expect(parsed.channelRestriction?.locks(user: "carol", groups: ["staff"]) == true)
        #expect(parsed.channelRestriction?.locks(user: "carol", groups: ["users"]) == false)
        #expect(XfconfRestriction.unlocked(XfconfAccessList("root")).locks(user: "alice", groups: []))
        #expect(!XfconfRestriction.unlocked(XfconfAccessList("root;;")).locks(user: "root", groups: []))
        #expect(!XfconfRestriction.locked(XfconfAccessList(";@")).locks(user: "alice", groups: []))
    }

    @Test(
        "written as xfconfd writes: its declaration, two spaces a level, names in order, arrays' values before children, 16-bit integers as int and uint"
    )
    func written() throws {
        let written = XfconfChannelFile(
            channelName: "demo",
            values: [
                try property("/b/z"): .scalar(.double(0.1)),
                try property("/b"): .array([.int32(-1), .string("x\"<&>'"), .uint64(UInt64.max)]),
                try property("/a/deep/leaf"): .scalar(.bool(false)),
                try property("/c"): .scalar(.string("line\none\ttab\r\nend")),
                try property("/d"): .array([]),
                try property("/e"): .scalar(.int16(-2)),
                try property("/f"): .scalar(.uint16(2)),
            ]
        ).xml
        #expect(
            written == """
                <?xml version="1.1" encoding="UTF-8"?>

                <channel name="demo" version="1.0">
                  <property name="a" type="empty">
                    <property name="deep" type="empty">
                      <property name="leaf" type="bool" value="false"/>
                    </property>
                  </property>
                  <property name="b" type="array">
                    <value type="int" value="-1"/>
                    <value type="string" value="x&quot;&lt;&amp;&gt;&apos;"/>
                    <value type="uint64" value="18446744073709551615"/>
                    <property name="z" type="double" value="0.10000000000000001"/>
                  </property>
                  <property name="c" type="string" value="line&#xA;one&#x9;tab&#xD;&#xA;end"/>
                  <property name="d" type="array">
                  </property>
                  <property name="e" type="int" value="-2"/>
                  <property name="f" type="uint" value="2"/>
                </channel>

                """)
    }

    @Test("every value read back from what was written is the value written, a 16-bit integer as a 32-bit one")
    func roundTrip() throws {
        var values: [XfconfProperty: XfconfValue] = [:]
        let scalars: [XfconfScalar] = [
            .bool(true), .int32(Int32.min), .uint32(UInt32.max), .int64(Int64.min), .uint64(UInt64.max), .double(-0.0),
            .double(1e-320), .double(.greatestFiniteMagnitude), .double(.infinity), .string("é\u{1}\u{7f}\u{85}<>&\"' \t\n\r\r\n"),
            .string(""), .uchar(0), .int16(Int16.min), .uint16(UInt16.max),
        ]
        for (index, scalar) in scalars.enumerated() {
            values[try property("/scalars/s\(index)")] = .scalar(scalar)
        }
        values[try property("/all")] = .array(scalars)
        values[try property("/all/under")] = .array([])
        values[try property("/x{1}<2>|[3],4:5.6_7-8")] = .scalar(.string("names"))
        let written = XfconfChannelFile(channelName: "round", values: values)
        let read = try XfconfChannelFile(parsing: Array(written.xml.utf8), administrator: false)
        #expect(read.values == values.mapValues(\.widened))
        #expect(read.channelName == "round")
    }
}

extension XfconfValue {
    /// The value as a channel file gives it back: 16-bit integers as 32-bit ones.
    var widened: XfconfValue {
        switch self {
        case .scalar(let scalar): .scalar(scalar.widened)
        case .array(let items): .array(items.map(\.widened))
        }
    }
}

extension XfconfScalar {
    /// The scalar as a channel file gives it back: 16-bit integers as 32-bit ones.
    var widened: XfconfScalar {
        switch self {
        case .int16(let number): .int32(Int32(number))
        case .uint16(let number): .uint32(UInt32(number))
        default: self
        }
    }
}
