import DBus
import Foundation
import PreferencesProtocol
import PrefsdTestSupport
import Testing

@Suite("Introspection")
struct IntrospectionTests {
    /// The XML file of the repository, beside this test's source.
    private var file: String {
        get throws {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            return try String(contentsOf: root.appendingPathComponent("Introspection/io.github.prefsd.Preferences1.xml"), encoding: .utf8)
        }
    }

    @Test("Introspect answers the file in Introspection/ verbatim")
    func verbatim() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        let answer = try await client.call("Introspect", [], interface: StandardInterface.introspectable)
        #expect(answer == [.string(try file)])
    }

    @Test("every method in the file is implemented with the file's signature")
    func everyMethod() async throws {
        let xml = try file
        let methods = Self.methods(in: xml, interface: PreferencesBus.interface)
        #expect(Set(methods.keys) == Set(PreferencesMethod.allCases.map(\.rawValue)))
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        for (name, signature) in methods {
            #expect(PreferencesMethod(rawValue: name)?.inputSignature == signature, "\(name)")
            // A call with no arguments gets InvalidArgs (or an answer), never UnknownMethod.
            let refusal = await client.refusal(name, [])
            #expect(refusal != StandardErrorName.unknownMethod, "\(name) is not implemented")
        }
    }

    /// Method names and input signatures of one interface in introspection XML.
    static func methods(in xml: String, interface: String) -> [String: String] {
        guard let start = xml.range(of: "<interface name=\"\(interface)\">"),
            let end = xml.range(of: "</interface>", range: start.upperBound..<xml.endIndex)
        else { return [:] }
        let body = xml[start.upperBound..<end.lowerBound]
        var methods: [String: String] = [:]
        for chunk in body.components(separatedBy: "<method name=\"").dropFirst() {
            let name = String(chunk.prefix { $0 != "\"" })
            let method = chunk.components(separatedBy: "</method>").first ?? ""
            var signature = ""
            for argument in method.components(separatedBy: "<arg ").dropFirst() where argument.contains("direction=\"in\"") {
                if let typeStart = argument.range(of: "type=\"") {
                    signature += argument[typeStart.upperBound...].prefix { $0 != "\"" }
                }
            }
            methods[name] = signature
        }
        return methods
    }
}
