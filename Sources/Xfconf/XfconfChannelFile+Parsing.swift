import CGLib

/// Reading a channel file as xfconfd does: with GLib's markup parser (the one xfconfd
/// uses, which knows no entities but XML's five and character references, so that no file
/// can expand into more than its own bytes), the same elements, attributes, types and
/// value syntax, and the same refusals; beyond xfconfd, elements may not nest deeper than
/// ``maximumDepth``. A file either parses whole or not at all (xfconfd keeps what it read
/// before an error).
extension XfconfChannelFile {
    /// The channel file `bytes` hold; `administrator` for a file in an administrator's folder,
    /// the only place `locked` and `unlocked` may appear.
    /// - Throws: `XfconfError.unparsableFile` saying where and why.
    public init(parsing bytes: some Collection<UInt8>, administrator: Bool) throws(XfconfError) {
        let state = ParseState(administrator: administrator)
        let contents = Array(bytes)
        var parser = GMarkupParser(
            start_element: { _, name, attributeNames, attributeValues, data, error in
                let state = Unmanaged<ParseState>.fromOpaque(data!).takeUnretainedValue()
                let attributes = ParseState.attributes(attributeNames, attributeValues)
                if let problem = state.start(String(cString: name!), attributes) { ParseState.fail(error, problem) }
            },
            end_element: { _, _, data, _ in
                Unmanaged<ParseState>.fromOpaque(data!).takeUnretainedValue().end()
            },
            text: nil, passthrough: nil, error: nil)
        let context = withUnsafeMutablePointer(to: &parser) { parser in
            g_markup_parse_context_new(parser, GMarkupParseFlags(rawValue: 0), Unmanaged.passUnretained(state).toOpaque(), nil)!
        }
        defer { g_markup_parse_context_free(context) }
        var error: UnsafeMutablePointer<GError>?
        let parsed = contents.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) {
                g_markup_parse_context_parse(context, $0.baseAddress, gssize($0.count), &error) != 0
                    && g_markup_parse_context_end_parse(context, &error) != 0
            }
        }
        guard parsed else {
            let detail = error.map { String(cString: $0.pointee.message) } ?? "the markup parser failed"
            g_clear_error(&error)
            throw .unparsableFile(detail: detail)
        }
        guard let file = state.file else { throw .unparsableFile(detail: "there is no <channel> element") }
        self = file
    }
}

/// What the parser has read so far of one file.
private final class ParseState {
    /// An open element.
    struct Frame {
        /// The property's path (`""` for `<channel>`, nothing for `<value>`).
        var path: String?
        /// The items of an array property read so far.
        var items: [XfconfScalar]?
        /// Whether `<value>` elements may follow: in an array property until a child
        /// property of it has ended, as in xfconfd.
        var acceptsValues = false
    }

    let administrator: Bool
    var file: XfconfChannelFile?
    var stack: [Frame] = []

    init(administrator: Bool) { self.administrator = administrator }

    /// The attributes of an element, in order (a later one of the same name wins, as in xfconfd).
    static func attributes(
        _ names: UnsafeMutablePointer<UnsafePointer<gchar>?>?, _ values: UnsafeMutablePointer<UnsafePointer<gchar>?>?
    ) -> [(name: String, value: String)] {
        guard let names, let values else { return [] }
        var attributes: [(String, String)] = []
        var index = 0
        while let name = names[index], let value = values[index] {
            attributes.append((String(cString: name), String(cString: value)))
            index += 1
        }
        return attributes
    }

    /// Stops the parse with `message`.
    static func fail(_ error: UnsafeMutablePointer<UnsafeMutablePointer<GError>?>?, _ message: String) {
        g_set_error_literal(error, g_markup_error_quark(), gint(G_MARKUP_ERROR_INVALID_CONTENT.rawValue), message)
    }

    /// Reads a start tag; a message when the file is refused.
    func start(_ element: String, _ attributes: [(name: String, value: String)]) -> String? {
        guard stack.count < XfconfChannelFile.maximumDepth else {
            return "elements nest deeper than \(XfconfChannelFile.maximumDepth) levels"
        }
        guard let top = stack.last else {
            guard element == "channel" else { return "Element <\(element)> not valid at top level" }
            return channel(attributes)
        }
        if top.path == nil { return "No other elements are allowed inside a <value> element." }
        if element == "property" { return property(attributes, parent: top.path ?? "") }
        if element == "value", top.acceptsValues { return value(attributes) }
        return "Element <\(element)> not allowed inside <\(top.path == "" ? "channel" : "property")>"
    }

    /// Reads an end tag: an array property's value is complete.
    func end() {
        guard let frame = stack.popLast() else { return }
        if let path = frame.path, let items = frame.items, let property = try? XfconfProperty(path) {
            file?.values[property] = .array(items)
        }
        if frame.path != nil, !stack.isEmpty, stack[stack.count - 1].path != "" {
            stack[stack.count - 1].acceptsValues = false
        }
    }

    /// The attributes of `element` by name (a later one of the same name wins, as in
    /// xfconfd), or xfconfd's refusal of the first one that is not among `known`.
    private func named(
        _ attributes: [(name: String, value: String)], of element: String, known: Set<String>
    ) -> (values: [String: String], refusal: String?) {
        var values: [String: String] = [:]
        for (attribute, value) in attributes {
            guard known.contains(attribute) else { return (values, "Unknown attribute in <\(element)>: \(attribute)") }
            values[attribute] = value
        }
        return (values, nil)
    }

    private func channel(_ attributes: [(name: String, value: String)]) -> String? {
        let (values, refusal) = named(attributes, of: "channel", known: ["name", "version", "locked", "unlocked"])
        if let refusal { return refusal }
        let (name, version, locked, unlocked) = (values["name"], values["version"], values["locked"], values["unlocked"])
        guard let name, !name.isEmpty, let version, !version.isEmpty else {
            return "Element <channel> requires both name and version attributes"
        }
        guard version.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false).first == "1" else {
            return "On-disk file version \(version) is not compatible with our file version 1.0"
        }
        let restriction = XfconfRestriction(locked: locked, unlocked: unlocked)
        if restriction != nil, !administrator {
            return "Attribute \"locked\" not allowed in <channel> for non-system files"
        }
        if file == nil { file = XfconfChannelFile(channelName: name, values: [:]) }
        if let restriction { file?.channelRestriction = restriction }
        stack.append(Frame(path: ""))
        return nil
    }

    private func property(_ attributes: [(name: String, value: String)], parent: String) -> String? {
        let (values, refusal) = named(attributes, of: "property", known: ["name", "type", "value", "locked", "unlocked"])
        if let refusal { return refusal }
        let (name, type, text) = (values["name"], values["type"], values["value"])
        let (locked, unlocked) = (values["locked"], values["unlocked"])
        guard let name, !name.isEmpty, let type, !type.isEmpty else {
            return "Element <property> requires both name and type attributes"
        }
        let path = parent + "/" + name
        let property = try? XfconfProperty(path)
        if property == nil, (file?.skipped.count ?? 0) < 100 { file?.skipped.append(path) }
        if let restriction = XfconfRestriction(locked: locked, unlocked: unlocked) {
            guard administrator else { return "Attribute \"locked\" not allowed in <property> for non-system files" }
            if let property { file?.restrictions[property] = restriction }
        }
        // A property read again is replaced: what the later element says wins.
        if let property { file?.values[property] = nil }
        var frame = Frame(path: path)
        switch type {
        case "empty": break
        case "array":
            frame.items = []
            frame.acceptsValues = true
        default:
            guard let scalar = XfconfScalar(fileType: type, text: text ?? "") else {
                return XfconfScalar.isFileType(type)
                    ? "Unable to parse value of type \"\(type)\" from \"\(text ?? "")\"" : "Invalid type for <property>: \"\(type)\""
            }
            if let property { file?.values[property] = .scalar(scalar) }
        }
        stack.append(frame)
        return nil
    }

    private func value(_ attributes: [(name: String, value: String)]) -> String? {
        let (values, refusal) = named(attributes, of: "value", known: ["type", "value"])
        if let refusal { return refusal }
        let (type, text) = (values["type"] ?? "", values["value"])
        if type == "array" { return "The type attribute of <value> cannot be an array" }
        guard XfconfScalar.isFileType(type) else { return "Invalid type for <value>: \"\(type)\"" }
        guard let scalar = XfconfScalar(fileType: type, text: text ?? "") else {
            return "Unable to parse value of type \"\(type)\" from \"\(text ?? "")\""
        }
        stack[stack.count - 1].items?.append(scalar)
        stack.append(Frame(path: nil))
        return nil
    }
}

extension XfconfScalar {
    /// Whether `type` names a scalar type in a channel file (`char` among them).
    static func isFileType(_ type: String) -> Bool {
        switch type {
        case "string", "bool", "int", "uint", "uchar", "char", "int16", "uint16", "int64", "uint64", "double": true
        default: false
        }
    }
}
