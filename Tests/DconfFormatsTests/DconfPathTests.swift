import DconfFormats
import Testing

/// ``DconfPath`` decides as dconf's own command does, and says which rule a path breaks in
/// dconf's words.
@Suite("dconf's path rules")
struct DconfPathTests {
    static let paths = ["/a", "/a/b", "/", "/a/", "/a/b/", "//", "/a//b", "/a//", "a/b", "a/", "", "/ä/ключ", "/a b/c"]

    @Test("a key and a directory are what dconf read and dconf list take, and the reason is dconf's", arguments: paths)
    func asDconfDecides(_ path: String) throws {
        let home = try DconfHome()
        defer { home.remove() }
        let read = try home.run(["read", path])
        #expect(DconfPath.isKey(path) == (read.status == 0), "dconf read \(path.debugDescription): \(read.stderr)")
        if let reason = DconfPath.whyNotKey(path) {
            #expect(read.stderr.contains("dconf key \(reason)"), "\(read.stderr)")
        }
        let list = try home.run(["list", path])
        #expect(DconfPath.isDirectory(path) == (list.status == 0), "dconf list \(path.debugDescription): \(list.stderr)")
        if let reason = DconfPath.whyNotDirectory(path) {
            #expect(list.stderr.contains("dconf dir \(reason)"), "\(list.stderr)")
        }
    }

    @Test("the errors name the path and the rule it breaks")
    func errors() {
        #expect(throws: DconfFormatError.notAKey("/a/", reason: "must not end with a slash")) { try DconfPath.checkKey("/a/") }
        #expect(throws: DconfFormatError.notADirectory("/a//b/", reason: "must not contain two consecutive slashes")) {
            try DconfPath.checkDirectory("/a//b/")
        }
        #expect(
            DconfFormatError.notAKey("org/a", reason: "must begin with a slash").description
                == #""org/a" is not a dconf key: a dconf key must begin with a slash (as /org/gnome/desktop/interface/gtk-theme)"#)
        #expect(DconfPath.whyNotKey("/a\u{0}b") == "must not contain a zero byte")
    }
}
