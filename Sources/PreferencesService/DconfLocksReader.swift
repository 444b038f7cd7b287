import Foundation
import GVariantCoding

/// The `locks/` files of a dconf system database: each line that starts with `/` locks that
/// key, as `dconf update` reads them. Other lines that are not blank or `#` comments are
/// reported (dconf ignores them silently, which hides a forgotten `/`).
enum DconfLocksReader {
    /// The keys one locks file locks, and the lines that could not be used.
    static func read(_ bytes: [UInt8]) -> (keys: Set<MappedKey>, problems: [FileProblem]) {
        var keys: Set<MappedKey> = []
        var problems: [FileProblem] = []
        for (index, line) in DconfKeyfile.lines(of: bytes).enumerated() {
            let number = index + 1
            guard let text = line else {
                problems.append(FileProblem(line: number, message: "the line is not UTF-8 text"))
                continue
            }
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            guard text.hasPrefix("/"), trimmed == text else {
                problems.append(
                    FileProblem(
                        line: number,
                        message:
                            "\"\(text)\" is not a key to lock: a lock is a dconf key alone on its line, starting with / (/org/gnome/desktop/interface/gtk-theme)"
                    ))
                continue
            }
            do {
                keys.insert(try MappedKey.mapping(text))
            } catch {
                problems.append(FileProblem(line: number, message: error.description))
            }
        }
        return (keys, problems)
    }
}
