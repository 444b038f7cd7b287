import CGLib

/// One channel file in xfconfd's per-channel XML format (`xfce-perchannel-xml/C.xml`): the
/// values of a channel's properties, and in an administrator's file who may change them.
///
/// ```xml
/// <?xml version="1.1" encoding="UTF-8"?>
///
/// <channel name="xsettings" version="1.0">
///   <property name="Net" type="empty">
///     <property name="ThemeName" type="string" value="Adwaita"/>
///   </property>
///   <property name="recent" type="array">
///     <value type="string" value="a.txt"/>
///     <value type="int" value="2"/>
///   </property>
/// </channel>
/// ```
///
/// Parsed from bytes by ``init(parsing:administrator:)`` and written by ``xml``; reading
/// and writing the files themselves is the caller's.
public struct XfconfChannelFile: Sendable, Equatable {
    /// The channel's name as the file's `<channel name="…">` gives it. xfconfd names a
    /// channel by its file's name and only requires this one to be there.
    public var channelName: String
    /// The value of every property that has one. A property that only holds others
    /// (`type="empty"`) has none.
    public var values: [XfconfProperty: XfconfValue]
    /// An administrator's file's restriction of the whole channel (`<channel locked="…">`).
    public var channelRestriction: XfconfRestriction?
    /// An administrator's file's restrictions of single properties, which may have no value.
    public var restrictions: [XfconfProperty: XfconfRestriction]
    /// The names of properties the file holds that are no xfconf property names, left out
    /// (xfconfd checks no names in its files; its clients cannot name these).
    public var skipped: [String]

    /// A channel file of `values`, restricting nothing.
    public init(channelName: String, values: [XfconfProperty: XfconfValue]) {
        self.channelName = channelName
        self.values = values
        channelRestriction = nil
        restrictions = [:]
        skipped = []
    }

    /// The deepest nesting of elements a channel file may have: far more than any Xfce
    /// channel uses, and a bound on what a hostile file can make the parser hold.
    public static let maximumDepth = 64

    /// The first line of every file xfconfd writes (from xfconf 4.19: XML 1.1, whose
    /// character references keep a string's control characters).
    static let declaration = "<?xml version=\"1.1\" encoding=\"UTF-8\"?>\n\n"

    // MARK: Writing

    /// The file as xfconfd writes it: each property an element under its parent, children
    /// in the order of their names, two spaces of indent per level, an array's items as
    /// `<value>` elements before its children, strings escaped as xfconfd escapes them
    /// (GLib's markup escaping, then tab, newline and carriage return as character
    /// references). Restrictions are not written: a user's file holds none.
    public var xml: String {
        var root = Node()
        for (property, value) in values {
            root.insert(value, at: property.components[...])
        }
        var text = Self.declaration + "<channel name=\"\(Self.escaped(channelName))\" version=\"1.0\">\n"
        for name in root.children.keys.sorted() {
            root.children[name]?.write(name: name, depth: 1, to: &text)
        }
        text += "</channel>\n"
        return text
    }

    /// A property in the tree of a channel's properties.
    private struct Node {
        var value: XfconfValue?
        var children: [Substring: Node] = [:]

        mutating func insert(_ value: XfconfValue, at path: ArraySlice<Substring>) {
            guard let first = path.first else {
                self.value = value
                return
            }
            children[first, default: Node()].insert(value, at: path.dropFirst())
        }

        func write(name: Substring, depth: Int, to text: inout String) {
            let indent = String(repeating: " ", count: depth * 2)
            text += indent + "<property name=\"" + XfconfChannelFile.escaped(String(name)) + "\""
            switch value {
            case nil:
                text += " type=\"empty\""
            case .scalar(let scalar):
                text += XfconfChannelFile.attributes(scalar)
            case .array(let items):
                text += " type=\"array\">\n"
                for item in items {
                    text += indent + "  <value" + XfconfChannelFile.attributes(item) + "/>\n"
                }
            }
            let isArray = if case .array = value { true } else { false }
            if !isArray { text += children.isEmpty ? "/>\n" : ">\n" }
            for child in children.keys.sorted() {
                children[child]?.write(name: child, depth: depth + 1, to: &text)
            }
            if isArray || !children.isEmpty { text += indent + "</property>\n" }
        }
    }

    /// ` type="…" value="…"` for `scalar`.
    static func attributes(_ scalar: XfconfScalar) -> String {
        var text = escaped(scalar.fileText)
        if case .string = scalar { text = text.blanksAsReferences }
        return " type=\"\(scalar.fileType)\" value=\"\(text)\""
    }

    /// `text` through GLib's `g_markup_escape_text`, as xfconfd escapes names and strings.
    static func escaped(_ text: String) -> String {
        let escaped = g_markup_escape_text(text, gssize(text.utf8.count))!
        defer { g_free(escaped) }
        return String(cString: escaped)
    }
}

extension String {
    /// The text with tab, newline and carriage return as character references, as xfconfd
    /// writes them in a string's value (compared by Unicode scalar: `\r\n` is one Swift
    /// character but two references).
    fileprivate var blanksAsReferences: String {
        guard unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\t" }) else { return self }
        var result = ""
        for scalar in unicodeScalars {
            switch scalar {
            case "\r": result += "&#xD;"
            case "\n": result += "&#xA;"
            case "\t": result += "&#x9;"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
