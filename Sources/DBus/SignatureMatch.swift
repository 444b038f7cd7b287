/// Comparing a value's type with a signature without building the value's signature string.
extension DBusValue {
    /// Where this value's signature ends in `signature` when `signature` spells it from
    /// `start`, else nil: `signatureText` is a prefix of `signature[start...]` exactly when
    /// this returns `start + signatureText.utf8.count`.
    func signatureEnd(in signature: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        if let code = oneLetterTypeCode {
            return start < signature.count && signature[start] == code ? start + 1 : nil
        }
        func expect(_ byte: UInt8, at index: Int) -> Int? {
            index < signature.count && signature[index] == byte ? index + 1 : nil
        }
        switch self {
        case .bytes:
            return expect(UInt8(ascii: "a"), at: start).flatMap { expect(UInt8(ascii: "y"), at: $0) }
        case .array(let element, _):
            guard var index = expect(UInt8(ascii: "a"), at: start) else { return nil }
            for byte in element.rawValue.utf8 {
                guard let next = expect(byte, at: index) else { return nil }
                index = next
            }
            return index
        case .dictEntry(let key, let value):
            guard let open = expect(UInt8(ascii: "{"), at: start), let afterKey = key.signatureEnd(in: signature, from: open),
                let afterValue = value.signatureEnd(in: signature, from: afterKey)
            else { return nil }
            return expect(UInt8(ascii: "}"), at: afterValue)
        case .structure(let fields):
            guard var index = expect(UInt8(ascii: "("), at: start) else { return nil }
            for field in fields {
                guard let next = field.signatureEnd(in: signature, from: index) else { return nil }
                index = next
            }
            return expect(UInt8(ascii: ")"), at: index)
        default:
            return nil  // every other case has a one-letter type code
        }
    }
}

extension DBusSignature {
    /// The first of `values` whose signature is not this one, or nil when all conform.
    func firstNonConforming(_ values: [DBusValue]) -> DBusValue? {
        var text = rawValue
        return text.withUTF8 { signature in
            values.first { $0.signatureEnd(in: signature, from: 0) != signature.count }
        }
    }
}
