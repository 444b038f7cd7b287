import Foundation

extension OpenStepPropertyList {
    /// A recursive-descent parser over UTF-8 bytes.
    struct Parser {
        let bytes: [UInt8]
        let maximumNesting: Int
        var position = 0

        init(bytes: [UInt8], maximumNesting: Int) {
            self.bytes = bytes
            self.maximumNesting = maximumNesting
        }

        var atEnd: Bool { position >= bytes.count }

        /// Characters a string may have without quotes.
        static func isUnquotedCharacter(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "_"), UInt8(ascii: "$"), UInt8(ascii: "+"), UInt8(ascii: "/"),
                UInt8(ascii: ":"), UInt8(ascii: "."), UInt8(ascii: "-"):
                true
            default:
                false
            }
        }

        func error(_ reason: String) -> ParseError {
            let line = 1 + bytes[..<min(position, bytes.count)].filter { $0 == UInt8(ascii: "\n") }.count
            return ParseError(reason: reason, line: line)
        }

        mutating func skipTrivia() throws(ParseError) {
            while position < bytes.count {
                let byte = bytes[position]
                if byte == 0x20 || byte == 0x09 || byte == 0x0a || byte == 0x0d {
                    position += 1
                } else if byte == UInt8(ascii: "/"), position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: "/") {
                    while position < bytes.count, bytes[position] != 0x0a { position += 1 }
                } else if byte == UInt8(ascii: "/"), position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: "*") {
                    position += 2
                    while position + 1 < bytes.count, !(bytes[position] == UInt8(ascii: "*") && bytes[position + 1] == UInt8(ascii: "/")) {
                        position += 1
                    }
                    guard position + 1 < bytes.count else { throw error("a /* comment is not closed") }
                    position += 2
                } else {
                    return
                }
            }
        }

        mutating func parseValue(depth: Int) throws(ParseError) -> PropertyListValue {
            try skipTrivia()
            guard position < bytes.count else { throw error("expected a value, found the end of the text") }
            switch bytes[position] {
            case UInt8(ascii: "("):
                try checkDepth(depth)
                return try parseArray(depth: depth)
            case UInt8(ascii: "{"):
                try checkDepth(depth)
                return try parseDictionary(depth: depth)
            case UInt8(ascii: "<"):
                return try parseAngled()
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                return .string(try parseQuoted())
            default:
                return .string(try parseUnquoted())
            }
        }

        private func checkDepth(_ depth: Int) throws(ParseError) {
            if depth >= maximumNesting { throw error("arrays and dictionaries nest more than \(maximumNesting) deep") }
        }

        private mutating func parseArray(depth: Int) throws(ParseError) -> PropertyListValue {
            position += 1
            var items: [PropertyListValue] = []
            while true {
                try skipTrivia()
                guard position < bytes.count else { throw error("an array is not closed with )") }
                if bytes[position] == UInt8(ascii: ")") { position += 1; return .array(items) }
                items.append(try parseValue(depth: depth + 1))
                try skipTrivia()
                guard position < bytes.count else { throw error("an array is not closed with )") }
                if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
                guard bytes[position] == UInt8(ascii: ")") else { throw error("expected , or ) in an array") }
            }
        }

        private mutating func parseDictionary(depth: Int) throws(ParseError) -> PropertyListValue {
            position += 1
            var entries: [String: PropertyListValue] = [:]
            while true {
                try skipTrivia()
                guard position < bytes.count else { throw error("a dictionary is not closed with }") }
                if bytes[position] == UInt8(ascii: "}") { position += 1; return .dictionary(entries) }
                guard case .string(let key) = try parseValue(depth: depth + 1) else {
                    throw error("a dictionary key must be a string")
                }
                try skipTrivia()
                guard position < bytes.count, bytes[position] == UInt8(ascii: "=") else {
                    throw error("expected = after the key \"\(key)\"")
                }
                position += 1
                entries[key] = try parseValue(depth: depth + 1)
                try skipTrivia()
                guard position < bytes.count, bytes[position] == UInt8(ascii: ";") else {
                    throw error("expected ; after the value of \"\(key)\"")
                }
                position += 1
            }
        }

        private mutating func parseAngled() throws(ParseError) -> PropertyListValue {
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "*") {
                position += 1
                guard let end = bytes[position...].firstIndex(of: UInt8(ascii: ">")), end > position else {
                    throw error("a <* typed value is not closed with >")
                }
                let kind = bytes[position]
                let body = String(decoding: bytes[(position + 1)..<end], as: UTF8.self)
                position = end + 1
                switch kind {
                case UInt8(ascii: "I"):
                    guard let number = Int64(body) else { throw error("<*I\(body)> is not an integer") }
                    return .integer(number)
                case UInt8(ascii: "R"):
                    guard let number = Double(body) else { throw error("<*R\(body)> is not a number") }
                    return .real(number)
                case UInt8(ascii: "B"):
                    switch body {
                    case "Y": return .boolean(true)
                    case "N": return .boolean(false)
                    default: throw error("<*B\(body)> is not a boolean; use <*BY> or <*BN>")
                    }
                case UInt8(ascii: "D"):
                    guard let seconds = ValueText.parseDate(body) else { throw error("<*D\(body)> is not a date") }
                    return .date(secondsSince1970: seconds)
                default:
                    throw error("unknown typed value <*\(Character(UnicodeScalar(kind)))…>")
                }
            }
            guard let end = bytes[position...].firstIndex(of: UInt8(ascii: ">")) else { throw error("data is not closed with >") }
            let digits = String(decoding: bytes[position..<end], as: UTF8.self)
            position = end + 1
            guard let data = ValueText.parseHex(digits) else {
                throw error("data must be pairs of hexadecimal digits between < and >")
            }
            return .data(data)
        }

        private mutating func parseQuoted() throws(ParseError) -> String {
            let quote = bytes[position]
            position += 1
            var scalars = String.UnicodeScalarView()
            var run = [UInt8]()
            func flush() {
                scalars.append(contentsOf: String(decoding: run, as: UTF8.self).unicodeScalars)
                run.removeAll(keepingCapacity: true)
            }
            while position < bytes.count {
                let byte = bytes[position]
                position += 1
                if byte == quote { flush(); return String(scalars) }
                guard byte == UInt8(ascii: "\\") else { run.append(byte); continue }
                guard position < bytes.count else { break }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "n"): run.append(0x0a)
                case UInt8(ascii: "t"): run.append(0x09)
                case UInt8(ascii: "r"): run.append(0x0d)
                case UInt8(ascii: "a"): run.append(0x07)
                case UInt8(ascii: "b"): run.append(0x08)
                case UInt8(ascii: "f"): run.append(0x0c)
                case UInt8(ascii: "v"): run.append(0x0b)
                case UInt8(ascii: "U"), UInt8(ascii: "u"):
                    var value: UInt32 = 0
                    var digits = 0
                    while digits < 4, position < bytes.count, let nibble = Character(Unicode.Scalar(bytes[position])).hexDigitValue {
                        value = value << 4 | UInt32(nibble)
                        position += 1
                        digits += 1
                    }
                    guard digits > 0, let scalar = Unicode.Scalar(value) else { throw error("invalid \\U escape") }
                    flush()
                    scalars.append(scalar)
                case UInt8(ascii: "0")...UInt8(ascii: "7"):
                    var value = UInt32(escape - UInt8(ascii: "0"))
                    var digits = 1
                    while digits < 3, position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(bytes[position]) {
                        value = value << 3 | UInt32(bytes[position] - UInt8(ascii: "0"))
                        position += 1
                        digits += 1
                    }
                    guard let scalar = Unicode.Scalar(value) else { throw error("invalid octal escape") }
                    flush()
                    scalars.append(scalar)
                default:
                    run.append(escape)
                }
            }
            throw error("a quoted string is not closed")
        }

        private mutating func parseUnquoted() throws(ParseError) -> String {
            let start = position
            while position < bytes.count, Self.isUnquotedCharacter(bytes[position]) { position += 1 }
            guard position > start else {
                throw error("unexpected character \"\(String(decoding: bytes[position..<min(position + 1, bytes.count)], as: UTF8.self))\"")
            }
            return String(decoding: bytes[start..<position], as: UTF8.self)
        }
    }
}
