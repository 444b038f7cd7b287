import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// The interfaces of `Introspection/*.xml`: what the interface page and the bus examples
/// of the documentation are checked against.
struct Introspection: Sendable {
    /// An argument: its D-Bus type and name.
    struct Argument: Sendable, Equatable, CustomStringConvertible {
        let type: String
        let name: String
        var description: String { "\(type) \(name)" }
    }

    /// A method, signal or property of an interface.
    struct Member: Sendable, Equatable {
        enum Kind: String, Sendable { case method, signal, property }
        let kind: Kind
        let interface: String
        let name: String
        /// A method's in-arguments, a signal's arguments, a property's type (one argument named "").
        var inputs: [Argument] = []
        /// A method's out-arguments.
        var outputs: [Argument] = []
        /// A property's access (`read`, `readwrite`).
        var access: String = ""
    }

    let members: [Member]

    /// The members of every `Introspection/*.xml` file.
    static func load() throws -> Introspection {
        let directory = Repository.root.appendingPathComponent("Introspection")
        var members: [Member] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() where file.hasSuffix(".xml") {
            let reader = Reader()
            let parser = XMLParser(data: try Data(contentsOf: directory.appendingPathComponent(file)))
            parser.delegate = reader
            guard parser.parse() else { throw ReaderError(file: file, reason: "\(parser.parserError.map(String.init(describing:)) ?? "does not parse")") }
            members += reader.members
        }
        return Introspection(members: members)
    }

    /// The member `name` of `interface`, if the XML has it.
    func member(_ interface: String, _ name: String) -> Member? {
        members.first { $0.interface == interface && $0.name == name }
    }

    struct ReaderError: Error, CustomStringConvertible {
        let file: String
        let reason: String
        var description: String { "Introspection/\(file): \(reason)" }
    }

    private final class Reader: NSObject, XMLParserDelegate {
        var members: [Member] = []
        var interface = ""
        var current: Member?

        func parser(
            _ parser: XMLParser, didStartElement element: String, namespaceURI: String?,
            qualifiedName: String?, attributes: [String: String] = [:]
        ) {
            switch element {
            case "interface":
                interface = attributes["name"] ?? ""
            case "method", "signal":
                current = Member(kind: element == "method" ? .method : .signal, interface: interface, name: attributes["name"] ?? "")
            case "property":
                members.append(
                    Member(
                        kind: .property, interface: interface, name: attributes["name"] ?? "",
                        inputs: [Argument(type: attributes["type"] ?? "", name: "")], access: attributes["access"] ?? ""
                    ))
            case "arg":
                let argument = Argument(type: attributes["type"] ?? "", name: attributes["name"] ?? "")
                if attributes["direction"] == "out" { current?.outputs.append(argument) } else { current?.inputs.append(argument) }
            default:
                break
            }
        }

        func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
            if element == "method" || element == "signal", let member = current {
                members.append(member)
                current = nil
            }
        }
    }
}
