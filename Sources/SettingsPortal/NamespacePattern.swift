/// One entry of the `namespaces` argument of `ReadAll`, as the portal documents it: an
/// exact namespace, or one ending in `*` that matches every namespace starting with what
/// comes before it (`org.example.*`). An empty entry matches every namespace.
public struct NamespacePattern: Sendable, Hashable {
    /// The entry as the caller gave it.
    public let text: String

    /// A pattern from a `ReadAll` argument entry.
    public init(_ text: String) {
        self.text = text
    }

    /// Whether `namespace` matches.
    public func matches(_ namespace: String) -> Bool {
        if text.isEmpty { return true }
        if text.hasSuffix("*") { return namespace.hasPrefix(text.dropLast()) }
        return namespace == text
    }

    /// Whether any of `patterns` matches `namespace`; an empty list matches every namespace.
    public static func any(_ patterns: [NamespacePattern], match namespace: String) -> Bool {
        patterns.isEmpty || patterns.contains { $0.matches(namespace) }
    }
}
