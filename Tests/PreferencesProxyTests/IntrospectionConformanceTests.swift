import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import Testing

@testable import PreferencesProxy

/// Holds the proxy against `Introspection/io.github.prefsd.Preferences1.xml`: every method,
/// signal and property has its member with the XML's signature, and the proxy calls no
/// name the XML lacks.
@Suite("The proxy against the Introspection XML")
struct IntrospectionConformanceTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var xml: IntrospectedInterface {
        get throws {
            let text = try String(contentsOf: root.appendingPathComponent("Introspection/io.github.prefsd.Preferences1.xml"), encoding: .utf8)
            return try #require(IntrospectedInterface(xml: text, name: PreferencesBus.interface))
        }
    }

    /// The proxy's request for each method of the interface. The switch is exhaustive: a
    /// method added to `PreferencesMethod` (which the XML must then have) does not compile
    /// here until the proxy has its member.
    static func request(for method: PreferencesMethod) -> (member: String, arguments: String, reply: String) {
        let value = PropertyListValue.integer(1)
        func shape<Reply>(_ request: PreferencesRequest<Reply>) -> (member: String, arguments: String, reply: String) {
            #expect(request.interface == PreferencesBus.interface)
            return (request.member, request.argumentSignature, request.replySignature)
        }
        switch method {
        case .read: return shape(PreferencesCall.read("d", "k"))
        case .write: return shape(PreferencesCall.write("d", "k", value))
        case .remove: return shape(PreferencesCall.remove("d", "k"))
        case .domains: return shape(PreferencesCall.domains())
        case .readDomain: return shape(PreferencesCall.readDomain("d"))
        case .apply: return shape(PreferencesCall.apply("d", set: ["k": value], remove: ["j"]))
        case .replaceDomain: return shape(PreferencesCall.replaceDomain("d", ["k": value]))
        case .removeDomain: return shape(PreferencesCall.removeDomain("d"))
        case .volatileDomains: return shape(PreferencesCall.volatileDomains())
        case .setVolatileDomain: return shape(PreferencesCall.setVolatileDomain("d", ["k": value]))
        case .removeVolatileDomain: return shape(PreferencesCall.removeVolatileDomain("d"))
        case .isForced: return shape(PreferencesCall.isForced("d", "k"))
        case .lookup: return shape(PreferencesCall.lookup(["d"], "k"))
        case .forcedKeys: return shape(PreferencesCall.forcedKeys("d"))
        case .readVolatileDomain: return shape(PreferencesCall.readVolatileDomain("d"))
        case .applyIf: return shape(PreferencesCall.applyIf("d", expected: ["k": value], absent: ["a"], set: ["k": value], remove: ["j"]))
        case .history: return shape(PreferencesCall.history("d", key: "k", after: 1, limit: 2))
        case .recentHistory: return shape(PreferencesCall.recentHistory("d", key: "k", limit: 2))
        case .revertTo: return shape(PreferencesCall.revertTo("d", sequence: 1))
        case .revertKeyTo: return shape(PreferencesCall.revertKeyTo("d", key: "k", sequence: 1))
        case .administratorDefaults: return shape(PreferencesCall.administratorDefaults("d"))
        case .administeredDomains: return shape(PreferencesCall.administeredDomains())
        }
    }

    @Test("every method of the XML has its request, with the XML's argument and reply signatures")
    func methods() throws {
        let xml = try Self.xml
        #expect(Set(xml.methods.keys) == Set(PreferencesMethod.allCases.map(\.rawValue)))
        for method in PreferencesMethod.allCases {
            let request = Self.request(for: method)
            let described = try #require(xml.methods[method.rawValue], "\(method.rawValue) is not in the XML")
            #expect(request.member == method.rawValue)
            #expect(request.arguments == described.input, "\(method.rawValue) arguments")
            #expect(request.reply == described.output, "\(method.rawValue) reply")
            #expect(method.inputSignature == described.input, "\(method.rawValue) in PreferencesProtocol")
        }
    }

    @Test("every signal of the XML is parsed with the XML's signature")
    func signals() throws {
        let xml = try Self.xml
        #expect(xml.signals == ServiceSignal.signatures)
        // A body of exactly that signature parses; one with a wrong argument does not.
        for (name, signature) in xml.signals {
            var body: [DBusValue] = [.string("com.example.App")]
            for type in signature.dropFirst().components(separatedBy: "a").dropFirst() {
                body.append(type == "s" ? .stringArray(["k"]) : PropertyListValue.dictionary(["k": .integer(1)]).dbusValue)
            }
            let message = DBusMessage(kind: .signal, path: PreferencesBus.objectPath, interface: PreferencesBus.interface, member: name, body: body)
            #expect(message.signature == signature, "\(name)")
            #expect(ServiceSignal(message) != nil, "\(name) with its XML signature")
            var wrong = message
            wrong.body[1] = .int32(1)
            #expect(ServiceSignal(wrong) == nil, "\(name) with a wrong argument")
        }
    }

    @Test("every property of the XML has its request")
    func properties() throws {
        let xml = try Self.xml
        #expect(xml.properties == [PreferencesBus.versionProperty: "s"])
        let request = PreferencesCall.version()
        #expect(request.interface == StandardInterface.properties && request.member == "Get")
        #expect(request.arguments == [.string(PreferencesBus.interface), .string(PreferencesBus.versionProperty)])
        #expect(request.replySignature == "v")
        #expect(try request.reply([.variant(.string("0.2.0"))]) == "0.2.0")
        #expect(throws: PreferencesProxyError.self) { try request.reply([.variant(.int32(2))]) }
    }

    @Test("the proxy's sources call no member the XML lacks, and have one request per member")
    func nothingExtra() throws {
        let directory = Self.root.appendingPathComponent("Sources/PreferencesProxy")
        let xml = try Self.xml
        // What the proxy may call besides prefsd's methods: the standard interfaces the XML
        // gives the object (Peer.Ping, Properties.Get), and the bus driver's match rules and owner.
        let text = try String(contentsOf: Self.root.appendingPathComponent("Introspection/io.github.prefsd.Preferences1.xml"), encoding: .utf8)
        let standard = [StandardInterface.peer, StandardInterface.properties].flatMap {
            IntrospectedInterface(xml: text, name: $0)?.methods.keys.map { $0 } ?? []
        }
        #expect(standard.contains("Ping") && standard.contains("Get"))
        let allowed = Set(xml.methods.keys).union(standard).union(["AddMatch", "RemoveMatch", "GetNameOwner"])
        var requestFactories = 0
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasSuffix(".swift") {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            for literal in Self.literals(after: "member: \"", in: text) {
                #expect(allowed.contains(literal), "\(file) calls \(literal), which the XML lacks")
            }
            for name in Self.literals(after: "PreferencesMethod(rawValue: \"", in: text) {
                Issue.record("\(file) names the method \(name) by a string")
            }
            if file.hasPrefix("PreferencesCall") {
                requestFactories += text.components(separatedBy: "    public static func ").count - 1
            }
        }
        #expect(requestFactories == xml.methods.count + xml.properties.count)
    }

    @Test("reply signatures other than the XML's are refused as unexpected")
    func wrongReplies() throws {
        #expect(throws: PreferencesProxyError.unexpectedReply("Read answered (s) where the interface gives (v)")) {
            try PreferencesCall.read("d", "k").reply([.string("x")])
        }
        #expect(throws: PreferencesProxyError.self) { try PreferencesCall.domains().reply([]) }
        #expect(try PreferencesCall.read("d", "k").reply([.variant(.int32(5))]) == .integer(5))
    }

    /// The text between `prefix` and the next quote, for each occurrence.
    static func literals(after prefix: String, in text: String) -> [String] {
        text.components(separatedBy: prefix).dropFirst().map { String($0.prefix { $0 != "\"" }) }
    }
}

/// The methods, signals and properties of one interface in introspection XML.
struct IntrospectedInterface {
    var methods: [String: (input: String, output: String)] = [:]
    var signals: [String: String] = [:]
    var properties: [String: String] = [:]

    init?(xml: String, name: String) {
        guard let start = xml.range(of: "<interface name=\"\(name)\">"),
            let end = xml.range(of: "</interface>", range: start.upperBound..<xml.endIndex)
        else { return nil }
        let body = String(xml[start.upperBound..<end.lowerBound])
        for chunk in body.components(separatedBy: "<method name=\"").dropFirst() {
            let method = chunk.components(separatedBy: "</method>")[0]
            let arguments = Self.arguments(method)
            methods[Self.name(chunk)] = (
                arguments.filter { $0.direction == "in" }.map(\.type).joined(),
                arguments.filter { $0.direction == "out" }.map(\.type).joined()
            )
        }
        for chunk in body.components(separatedBy: "<signal name=\"").dropFirst() {
            signals[Self.name(chunk)] = Self.arguments(chunk.components(separatedBy: "</signal>")[0]).map(\.type).joined()
        }
        for chunk in body.components(separatedBy: "<property name=\"").dropFirst() {
            properties[Self.name(chunk)] = Self.attribute("type", in: chunk)
        }
    }

    private static func name(_ chunk: String) -> String {
        String(chunk.prefix { $0 != "\"" })
    }

    private static func arguments(_ element: String) -> [(type: String, direction: String)] {
        element.components(separatedBy: "<arg ").dropFirst().map { argument in
            let tag = argument.components(separatedBy: ">")[0]
            return (attribute("type", in: tag), attribute("direction", in: tag))
        }
    }

    private static func attribute(_ name: String, in tag: String) -> String {
        guard let start = tag.range(of: "\(name)=\"") else { return "" }
        return String(tag[start.upperBound...].prefix { $0 != "\"" })
    }
}
