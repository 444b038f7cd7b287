/// Why a GVDB file could not be read or written: the one error of this module.
///
/// ``kind`` says what went wrong for a program; ``message`` says it for a person, naming the
/// offset, item or key concerned and what to do about it.
public struct GVDBError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The classes of failure.
    public enum Kind: Equatable, Sendable {
        /// The file is shorter than its header or than what its header points at.
        case truncated
        /// The file does not start with GVDB's signature and version 0.
        case badHeader
        /// A pointer or an index of the file leads outside the file or its table.
        case outOfBounds
        /// An item of a hash table is malformed: a name that is not UTF-8, a parent chain that
        /// loops or never reaches a root, an unknown item type, a value that is not a variant.
        case badItem
        /// A name or value given to the writer cannot be stored (not a dconf path, a
        /// duplicate, a parent that is not a directory, a file too large for 32-bit offsets).
        case invalidInput
    }

    /// What went wrong, for a program.
    public let kind: Kind
    /// What went wrong and what to do, for a person.
    public let message: String

    /// An error of `kind` with `message`.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// ``message``.
    public var description: String { message }
}
