import DBus
import Xfconf

/// xfconf's values on the bus, as xfconfd and libxfconf send them: a scalar as its own
/// GVariant type (`b i u x t d s y n q`), an array, whatever its items, as `av` (each item a
/// variant of its scalar type; an empty array is an empty `av`).
extension XfconfValue {
    /// The value as the `v` of `GetProperty`'s answer, `GetAllProperties`' dictionary and
    /// `PropertyChanged`.
    var busValue: DBusValue {
        switch self {
        case .scalar(let scalar): scalar.busValue
        case .array(let items): .array(element: .variant, items.map { .variant($0.busValue) })
        }
    }

    /// The value `SetProperty` was given (the content of its `v`), as xfconfd takes it: a
    /// scalar of a type it carries, an `av` of such scalars, or an `as` (an array of strings);
    /// a variant holding one of those counts as that value (xfconfd unwraps one variant).
    /// `nil` for any other type: a structure, a dictionary, bytes, an object path, an array
    /// of another type, or an `av` holding one.
    init?(bus value: DBusValue) {
        switch value {
        case .variant(let inner):
            // One level only, as xfconfd's `xfconf_gvariant_to_gvalue` unwraps it.
            if case .variant = inner { return nil }
            self.init(bus: inner)
        case .array(let element, let items) where element == .variant:
            var scalars: [XfconfScalar] = []
            scalars.reserveCapacity(items.count)
            for item in items {
                guard case .variant(let inner) = item, let scalar = XfconfScalar(bus: inner) else { return nil }
                scalars.append(scalar)
            }
            self = .array(scalars)
        case .array(let element, let items) where element == .string:
            self = .array(items.compactMap { $0.stringValue.map(XfconfScalar.string) })
        default:
            guard let scalar = XfconfScalar(bus: value) else { return nil }
            self = .scalar(scalar)
        }
    }

    /// The GVariant type of a value `SetProperty` was given, for messages.
    static func typeText(of value: DBusValue) -> String {
        if case .variant(let inner) = value { return inner.signature.rawValue }
        return value.signature.rawValue
    }
}

extension XfconfScalar {
    /// The scalar as a bus value of its own type.
    var busValue: DBusValue {
        switch self {
        case .bool(let flag): .boolean(flag)
        case .int32(let number): .int32(number)
        case .uint32(let number): .uint32(number)
        case .int64(let number): .int64(number)
        case .uint64(let number): .uint64(number)
        case .double(let number): .double(number)
        case .string(let text): .string(text)
        case .uchar(let number): .byte(number)
        case .int16(let number): .int16(number)
        case .uint16(let number): .uint16(number)
        }
    }

    /// The scalar of a bus value of a scalar type xfconf carries, else `nil`.
    init?(bus value: DBusValue) {
        switch value {
        case .boolean(let flag): self = .bool(flag)
        case .int32(let number): self = .int32(number)
        case .uint32(let number): self = .uint32(number)
        case .int64(let number): self = .int64(number)
        case .uint64(let number): self = .uint64(number)
        case .double(let number): self = .double(number)
        case .string(let text): self = .string(text)
        case .byte(let number): self = .uchar(number)
        case .int16(let number): self = .int16(number)
        case .uint16(let number): self = .uint16(number)
        default: return nil
        }
    }
}
