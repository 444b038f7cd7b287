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
        case .failure(let error) where error.isRemote(named: "org.freedesktop.DBus.Error.LimitsExceeded") && error.message.hasPrefix("prefsd holds at most"):
            // The door's bound on calls held while prefsd learns who a new connection is
            // (`--max-held-calls`): it answers before any method is looked at, so it is the
            // right answer whatever the message (a loaded machine identifies callers slower,
            // and the fuzzer's reconnecting clients then reach it).
            return nil
        case .failure(let error) where error.code == .remote: name = error.name
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
