import DconfFormats
import GSettingsPaths
import GVariantCoding
import PreferencesModel

/// The keyfiles of a dconf system database (`/etc/dconf/db/NAME.d/*`), read with
/// ``DconfKeyfile`` as `dconf update` reads them, so that prefsd needs no compiled database:
/// groups are directories below `/` (`[org/gnome/desktop/interface]`), each `key=value` a
/// GVariant text. Unlike `dconf update`, which refuses the whole database over one bad line,
/// a bad line is reported with its number and the others apply.
enum DconfKeyfileReader {
    /// The values of one keyfile, stored as the GSettings module stores them, the last
    /// line of a key winning; and the lines that could not be used, in line order. `check`
    /// judges each value against the bus's limits (a thrown error's description is reported).
    static func read(_ bytes: [UInt8], check: (PropertyListValue, String) throws -> Void) -> (values: [MappedKey: PropertyListValue], problems: [FileProblem]) {
        let (assignments, unusable) = DconfKeyfile.read(bytes)
        var values: [MappedKey: PropertyListValue] = [:]
        var problems = unusable.map { FileProblem(line: $0.line, message: $0.message) }
        for assignment in assignments {
            let group = assignment.group
            let path = "/" + (group == "/" ? "" : group + "/") + assignment.name
            let key: MappedKey
            do {
                key = try MappedKey.mapping(path)
            } catch {
                problems.append(FileProblem(line: assignment.line, message: "[\(group)] \(assignment.name): \(error)"))
                continue
            }
            do {
                let value = try GVariantText.storedValue(parsing: assignment.text, key: path).value
                try check(value, "the value of \(path)")
                values[key] = value
            } catch {
                problems.append(FileProblem(line: assignment.line, message: "\(error)"))
            }
        }
        return (values, problems.sorted { $0.line < $1.line })
    }
}
