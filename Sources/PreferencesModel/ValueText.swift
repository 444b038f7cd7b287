import Foundation

/// The text forms of dates, data and real numbers, parsed and printed in this one place
/// for every reader of text: the old-style property-list parser (`<*D…>`, `<…>`) and the
/// command line (`-date`, `-data`, `read`, `--json`).
///
/// **Dates** (``parseDate(_:)``), white space around them ignored; a time without a zone
/// is UTC:
///
/// | form | example |
/// | --- | --- |
/// | what `defaults` prints | `2024-05-01 12:00:00 +0000` |
/// | ISO 8601, zone `Z`, `±hh:mm` or `±hhmm` | `2024-05-01T12:00:00Z`, `2024-05-01T14:00:00+02:00` |
/// | either, with fractional seconds | `2024-05-01T12:00:00.25Z`, `2024-05-01 12:00:00.250 +0000` |
/// | without a zone (UTC) | `2024-05-01T12:00:00`, `2024-05-01 12:00:00` |
/// | a day (midnight UTC) | `2024-05-01` |
///
/// Fractional seconds are kept to the millisecond.
///
/// **Data** (``parseHex(_:)``): hexadecimal digits in pairs, either case, white space
/// anywhere between them.
///
/// **Reals** (``formatReal(_:)``): a whole number below 10^15 prints without a decimal
/// point (`2`), any other the shortest text that reads back as the same number (`1.5`,
/// `1e+20`).
public enum ValueText {
    /// The date formats ``parseDate(_:)`` accepts, tried in order (DateFormatter patterns).
    public static let dateFormats = [
        "yyyy-MM-dd HH:mm:ss Z", "yyyy-MM-dd HH:mm:ss.SSS Z",
        "yyyy-MM-dd'T'HH:mm:ssXXXXX", "yyyy-MM-dd'T'HH:mm:ss.SSSXXXXX",
        "yyyy-MM-dd'T'HH:mm:ssZ", "yyyy-MM-dd'T'HH:mm:ss.SSSZ",
        "yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd'T'HH:mm:ss.SSS",
        "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd HH:mm:ss.SSS",
        "yyyy-MM-dd",
    ]

    /// Seconds since 1970 for a date in one of the forms above, or `nil`.
    public static func parseDate(_ text: String) -> Double? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.isLenient = false
        for format in dateFormats {
            formatter.dateFormat = format
            if let date = formatter.date(from: trimmed) { return date.timeIntervalSince1970 }
        }
        return nil
    }

    /// A date as `defaults` prints it: `2024-05-01 12:00:00 +0000`.
    public static func formatDate(_ seconds: Double) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss Z"
        return formatter.string(from: Date(timeIntervalSince1970: seconds))
    }

    /// A date as ISO 8601, with fractional seconds when it has them: `2024-05-01T12:00:00Z`.
    public static func iso8601(_ seconds: Double) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        if seconds != seconds.rounded(.down) {
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        }
        return formatter.string(from: Date(timeIntervalSince1970: seconds))
    }

    /// The bytes of hexadecimal text (digits in pairs, white space ignored), or `nil`.
    public static func parseHex(_ text: some StringProtocol) -> Data? {
        var bytes = Data()
        bytes.reserveCapacity(text.utf8.count / 2)
        var high: UInt8?
        for character in text where !character.isWhitespace {
            guard let nibble = character.hexDigitValue, character.isASCII else { return nil }
            if let first = high {
                bytes.append(first << 4 | UInt8(nibble))
                high = nil
            } else {
                high = UInt8(nibble)
            }
        }
        return high == nil ? bytes : nil
    }

    /// A real as text: whole numbers below 10^15 without a decimal point, others the
    /// shortest text that reads back as the same number.
    public static func formatReal(_ number: Double) -> String {
        if number.isFinite, number == number.rounded(), abs(number) < 1e15 { return String(Int64(number)) }
        return "\(number)"
    }
}
