import Foundation

/// A machine's identity in the roaming folder: 32 lowercase hexadecimal digits, derived
/// from `/etc/machine-id` by a one-way hash, so the folder (which other machines and the
/// sync engine see) never carries the machine ID itself.
public struct MachineID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The 32 hexadecimal digits.
    public let rawValue: String

    /// Accepts exactly 32 lowercase hexadecimal digits.
    public init?(_ text: some StringProtocol) {
        guard text.utf8.count == 32, text.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            return nil
        }
        rawValue = String(text)
    }

    /// The identity derived from a machine ID (the contents of `/etc/machine-id`):
    /// the first 16 bytes of SHA-256 of `io.github.prefsd.Roaming:` and the trimmed ID.
    public init(derivedFrom machineID: String) {
        let trimmed = machineID.trimmingCharacters(in: .whitespacesAndNewlines)
        let digest = SHA256.hash(Array("io.github.prefsd.Roaming:\(trimmed)".utf8))
        rawValue = digest.prefix(16).map { byte in
            let digits = Array("0123456789abcdef".utf8)
            return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 15)]], as: UTF8.self)
        }.joined()
    }

    /// The 16 bytes the digits spell.
    var bytes: [UInt8] {
        let digits = Array(rawValue.utf8)
        // Checked to be 32 hexadecimal digits when made.
        return stride(from: 0, to: 32, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16) ?? 0 }
    }

    /// Makes an identity from its 16 bytes.
    init(bytes: some Collection<UInt8>) {
        let digits = Array("0123456789abcdef".utf8)
        rawValue = String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
    }

    public var description: String { rawValue }

    public static func < (lhs: MachineID, rhs: MachineID) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A machine's human name, as its file declares it: 1–64 bytes of `A-Z a-z 0-9 . _ -`
/// (a host name), shown in `prefs roaming status` and in the history's `roaming:<name>`.
public enum MachineName {
    /// The longest name, in bytes.
    public static let maximumLength = 64

    /// Whether `name` is a valid machine name.
    public static func isValid(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= maximumLength
            && name.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5a).contains(byte) || (0x61...0x7a).contains(byte)
                    || byte == 0x2e || byte == 0x5f || byte == 0x2d
            }
    }

    /// `name` made valid: characters outside the set become `-`, cut to the longest length;
    /// `fallback` when nothing is left.
    public static func sanitized(_ name: String, fallback: String) -> String {
        let bytes = name.utf8.prefix(maximumLength).map { byte -> UInt8 in
            isValid(String(decoding: [byte], as: UTF8.self)) ? byte : 0x2d
        }
        let result = String(decoding: bytes, as: UTF8.self)
        return isValid(result) ? result : fallback
    }
}
