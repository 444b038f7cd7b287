import GVDB

extension DconfMirror {
    /// prefsd's mark in the database files it writes, the value of the GVDB name
    /// ``DconfMirror/markName``: the string `prefsd`, then the identity of the store the file
    /// mirrors (`prefsd 5f0e4f8b2c7d4e1a9b3c6d8e0f1a2b3c`).
    ///
    /// A prefsd takes a file carrying its own store's mark for its own mirror: the store is
    /// the truth, and the file is made again from it. A file carrying another store's mark
    /// (copied from another machine or account, or a backup) is taken in as dconf-service's
    /// file would be. The identity is no secret (the file is readable), so a mark can be
    /// copied: what keeps a copied mark from costing anything is that a file holding values
    /// the store does not is kept aside before it is written again.
    public struct Mark: Sendable, Hashable {
        /// The identity of the store the file mirrors (32 lowercase hexadecimal digits); `nil`
        /// for a mark that names no store (the bare `prefsd` of prefsd 0.4 and earlier).
        public let store: String?

        /// The mark of the store `store` (`nil`: a mark naming no store).
        public init(store: String?) {
            self.store = store
        }

        /// The mark the database file `bytes` carries; `nil` when it carries none (or the
        /// file is damaged, or the mark is not one prefsd writes).
        public init?(inFile bytes: [UInt8]) {
            guard let value = try? GVDBFile(bytes: bytes).value(forKey: DconfMirror.markName), value.typeString == "s",
                value.bytes.last == 0, let text = String(validating: value.bytes.dropLast(), as: UTF8.self)
            else { return nil }
            self.init(text: text)
        }

        /// The mark of `text` (`prefsd`, or `prefsd` and a store's identity).
        init?(text: String) {
            if text == Self.prefix {
                store = nil
            } else if text.hasPrefix(Self.prefix + " "), case let identity = String(text.dropFirst(Self.prefix.count + 1)),
                Self.isIdentity(identity)
            {
                store = identity
            } else {
                return nil
            }
        }

        /// The mark as the file stores it: a GVariant string (its bytes and a zero; the type
        /// `s` has no fixed size, so making it cannot fail).
        var value: GVDBValue? {
            let text = store.map { Self.prefix + " " + $0 } ?? Self.prefix
            return try? GVDBValue(typeString: "s", bytes: Array(text.utf8) + [0])
        }

        /// Whether `text` is a store's identity: 32 lowercase hexadecimal digits.
        public static func isIdentity(_ text: String) -> Bool {
            text.utf8.count == 32 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
        }

        /// What every mark starts with.
        static let prefix = "prefsd"
    }
}
