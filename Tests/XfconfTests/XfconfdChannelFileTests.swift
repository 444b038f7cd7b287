import BusTestSupport
import Foundation
import Testing
import Xfconf

/// prefsd's channel files judged by Debian's xfconfd 4.18 and xfconf-query, each on the
/// test's private bus with its own folders.
@Suite("Debian's xfconfd reads the channel files prefsd writes, and prefsd reads those xfconfd writes", .serialized)
struct XfconfdChannelFileTests {
    private func property(_ path: String) throws -> XfconfProperty { try XfconfProperty(path) }

    @Test("xfconfd answers every value of a file prefsd wrote with its value and type (16-bit integers as 32-bit ones)")
    func xfconfdReadsWritten() async throws {
        let xfconfd = try RealXfconfd()
        let scalars: [XfconfScalar] = [
            .bool(true), .bool(false), .int32(Int32.min), .uint32(UInt32.max), .int64(Int64.min), .uint64(UInt64.max),
            .double(0.1), .double(-0.0), .double(1e-300), .double(.greatestFiniteMagnitude), .string("é\u{1}<>&\"' \t\n\r\r\nend "),
            .string(""), .uchar(255), .int16(Int16.min), .uint16(UInt16.max),
        ]
        // (No subnormal double: GVariant's text, gdbus's answer here, cannot hold one.)
        var values: [XfconfProperty: XfconfValue] = [:]
        for (index, scalar) in scalars.enumerated() {
            values[try property("/scalars/s\(index)")] = .scalar(scalar)
        }
        values[try property("/mixed")] = .array(scalars)
        values[try property("/mixed/under")] = .array([])
        values[try property("/x{1}<2>|[3],4:5.6_7-8")] = .scalar(.string("every character a name may have"))
        let file = XfconfChannelFile(channelName: "written", values: values)
        try Data(file.xml.utf8).write(to: xfconfd.userChannels.appendingPathComponent("written.xml"))

        try await xfconfd.start()
        let answered = try xfconfd.allProperties("written")
        #expect(answered == Dictionary(uniqueKeysWithValues: values.map { ($0.key.path, $0.value.widened) }))
        #expect(try xfconfd.query(["-c", "written", "-p", "/scalars/s2"]) == "-2147483648\n")
        #expect(xfconfd.stop() == 0)
    }

    @Test("a file xfconfd wrote reads as the values xfconf-query set, and prefsd writes the same file")
    func readsXfconfdWritten() async throws {
        let xfconfd = try RealXfconfd()
        try await xfconfd.start()
        // Set in the order of their names: xfconfd writes properties in the order they came.
        let sets: [(String, [String])] = [
            ("/a/bool", ["-t", "bool", "-s", "true"]),
            ("/a/double", ["-t", "double", "-s", "0.1"]),
            ("/a/int", ["-t", "int", "-s", "-5"]),
            ("/a/int64", ["-t", "int64", "-s", "-9223372036854775808"]),
            ("/a/string", ["-t", "string", "-s", "a&b<\"c>'d"]),
            ("/a/uchar", ["-t", "uchar", "-s", "200"]),
            ("/a/uint", ["-t", "uint", "-s", "4294967295"]),
            ("/a/uint64", ["-t", "uint64", "-s", "18446744073709551615"]),
            ("/b", ["-a", "-t", "int", "-s", "1", "-t", "string", "-s", "x", "-t", "double", "-s", "2.5"]),
            ("/b/c", ["-t", "string", "-s", "under an array"]),
        ]
        for (path, arguments) in sets {
            _ = try xfconfd.query(["-c", "made", "-p", path, "-n"] + arguments)
        }
        #expect(xfconfd.stop() == 0)

        let bytes = try Data(contentsOf: xfconfd.userChannels.appendingPathComponent("made.xml"))
        let parsed = try XfconfChannelFile(parsing: bytes, administrator: false)
        #expect(
            parsed.values == [
                try property("/a/bool"): .scalar(.bool(true)), try property("/a/double"): .scalar(.double(0.1)),
                try property("/a/int"): .scalar(.int32(-5)), try property("/a/int64"): .scalar(.int64(Int64.min)),
                try property("/a/string"): .scalar(.string("a&b<\"c>'d")), try property("/a/uchar"): .scalar(.uchar(200)),
                try property("/a/uint"): .scalar(.uint32(UInt32.max)), try property("/a/uint64"): .scalar(.uint64(UInt64.max)),
                try property("/b"): .array([.int32(1), .string("x"), .double(2.5)]),
                try property("/b/c"): .scalar(.string("under an array")),
            ])
        // Byte for byte but the first line: xfconfd 4.18 declares XML 1.0, later ones 1.1.
        let xfconfdLines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        let prefsdLines = parsed.xml.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(xfconfdLines.first == "<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
        #expect(prefsdLines.dropFirst() == xfconfdLines.dropFirst())
    }
}
