/// Why a roaming file was not used, or could not be written: each message says what is
/// wrong with which file and what to do about it.
public enum RoamingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file is not a roaming file, or is damaged (truncated, a wrong checksum).
    case corrupt(String)
    /// The file passes one of the size bounds (file size, entries, a value).
    case overLimit(String)
    /// A domain name, key or machine name in the file is not valid.
    case invalidName(String)
    /// A value in the file nests too deeply or is not a valid value.
    case invalidValue(String)
    /// A time in the file lies too far in the future.
    case clock(String)
    /// Reading or writing the folder failed.
    case io(String)

    /// A message a person can act on.
    public var description: String {
        switch self {
        case .corrupt(let message), .overLimit(let message), .invalidName(let message),
            .invalidValue(let message), .clock(let message), .io(let message):
            message
        }
    }
}
