import Foundation
import PreferencesModel
import SettingsBundle
import Testing

@Suite("Malformed settings bundles")
struct MalformedBundleTests {
    typealias F = BundleFiles

    @Test func unknownTypeIsReportedAndTheRestWorks() throws {
        let files = try BundleFiles()
        let path = try files.write(
            "b/Root.plist",
            F.plist(
                """
                <key>PreferenceSpecifiers</key>
                <array>
                \(F.entry([("Type", F.string("PSToggleSwitchSpecifier")), ("Key", F.string("A")), ("Title", F.string("First")), ("DefaultValue", "<true/>")]))
                \(F.entry([("Type", F.string("PSColorWellSpecifier")), ("Key", F.string("Colour"))]))
                \(F.entry([("Type", F.string("PSTextFieldSpecifier")), ("Key", F.string("B")), ("DefaultValue", F.string("x"))]))
                </array>
                """))
        let bundle = SettingsBundle.load(domain: "com.example.b", directory: files.root + "/b", languages: ["en"])
        #expect(bundle.root.specifiers.map(\.key) == ["A", "B"])
        #expect(bundle.defaultValues == ["A": .boolean(true), "B": .string("x")])
        #expect(bundle.problems.count == 1)
        let problem = try #require(bundle.problems.first)
        #expect(problem.path == path)
        #expect(problem.description.contains("PreferenceSpecifiers[1] (Key \"Colour\")"))
        #expect(problem.description.contains("unknown Type \"PSColorWellSpecifier\""))
        #expect(problem.description.contains("PSToggleSwitchSpecifier"))  // names the known types
    }

    @Test func badEntriesAreEachReportedWithTheirPlace() throws {
        let files = try BundleFiles()
        try files.write(
            "b/Root.plist",
            F.plist(
                """
                <key>PreferenceSpecifiers</key>
                <array>
                \(F.entry([("Type", F.string("PSMultiValueSpecifier")), ("Key", F.string("M")), ("Titles", "<array><string>a</string></array>"), ("Values", "<array/>")]))
                \(F.entry([("Type", F.string("PSSliderSpecifier")), ("Key", F.string("S")), ("MinimumValue", "<integer>9</integer>"), ("MaximumValue", "<integer>1</integer>")]))
                \(F.entry([("Type", F.string("PSToggleSwitchSpecifier")), ("Title", F.string("No key"))]))
                \(F.entry([("Key", F.string("NoType"))]))
                <string>not a dictionary</string>
                \(F.entry([("Type", F.string("PSMultiValueSpecifier")), ("Key", F.string("D")), ("DefaultValue", F.string("z")), ("Titles", "<array><string>A</string></array>"), ("Values", "<array><string>a</string></array>")]))
                \(F.entry([("Type", F.string("PSGroupSpecifier")), ("Title", F.string("Still here"))]))
                </array>
                """))
        let bundle = SettingsBundle.load(domain: "com.example.b", directory: files.root + "/b", languages: ["en"])
        #expect(bundle.root.specifiers.map(\.title) == ["Still here"])
        let messages = bundle.problems.map(\.description)
        #expect(messages.count == 6)
        #expect(messages[0].contains("PreferenceSpecifiers[0] (Key \"M\")") && messages[0].contains("Titles has 1 items but Values has 0"))
        #expect(messages[1].contains("PreferenceSpecifiers[1] (Key \"S\")") && messages[1].contains("MinimumValue 9.0 must be below MaximumValue 1.0"))
        #expect(messages[2].contains("PreferenceSpecifiers[2]") && messages[2].contains("needs a Key"))
        #expect(messages[3].contains("PreferenceSpecifiers[3] (Key \"NoType\")") && messages[3].contains("has no Type"))
        #expect(messages[4].contains("PreferenceSpecifiers[4]") && messages[4].contains("must be a dictionary"))
        #expect(messages[5].contains("(Key \"D\")") && messages[5].contains("DefaultValue is not one of Values"))
    }

    @Test func malformedXMLNamesTheFileAndLineAndTheRootStillWorks() throws {
        let files = try BundleFiles()
        try files.copyExample(to: "com.example.Editor")
        // Line 9 leaves a <string> open; line 10 closes the array around it.
        let broken = try files.write(
            "com.example.Editor/Advanced.plist",
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0">
            <dict>
            \t<key>Title</key>
            \t<string>Advanced</string>
            \t<key>PreferenceSpecifiers</key>
            \t<array>
            \t\t<dict>
            \t\t\t<key>Type</key><string>PSGroupSpecifier
            \t</array>
            </dict>
            </plist>
            """)
        let bundle = SettingsBundle.load(domain: "com.example.Editor", directory: files.root + "/com.example.Editor", languages: ["en"])
        #expect(bundle.problems.count == 1)
        let problem = try #require(bundle.problems.first)
        #expect(problem.path == broken)
        #expect(problem.description.contains("line 10"), "\(problem)")  // </array> closes the unclosed <string>
        #expect(bundle.root.specifiers.count == 9)
        #expect(bundle.defaultValues["DarkStyle"] == .boolean(false))
        #expect(bundle.defaultValues["AutoSave"] == nil)
    }

    @Test func missingChildPaneAndNonDictionaryRoot() throws {
        let files = try BundleFiles()
        try files.write(
            "b/Root.plist",
            F.plist(
                """
                <key>PreferenceSpecifiers</key>
                <array>
                \(F.entry([("Type", F.string("PSChildPaneSpecifier")), ("Title", F.string("Gone")), ("File", F.string("Missing"))]))
                \(F.entry([("Type", F.string("PSChildPaneSpecifier")), ("Title", F.string("Escape")), ("File", F.string("../x"))]))
                </array>
                """))
        let bundle = SettingsBundle.load(domain: "com.example.b", directory: files.root + "/b", languages: ["en"])
        #expect(bundle.root.specifiers.map(\.file) == ["Missing"])
        #expect(bundle.problems.count == 2)
        #expect(bundle.problems.contains(.unreadable(path: files.root + "/b/Missing.plist", reason: "the child pane's file is missing")))
        #expect(bundle.problems.contains { $0.description.contains("File \"../x\"") })

        try files.write("c/Root.plist", "<?xml version=\"1.0\"?><plist version=\"1.0\"><array/></plist>")
        let array = SettingsBundle.load(domain: "com.example.c", directory: files.root + "/c", languages: ["en"])
        #expect(array.root.specifiers.isEmpty)
        #expect(array.problems.first?.description.contains("holds a array") == true)
    }

    @Test func malformedStringsFileIsReportedAndTitlesStayUntranslated() throws {
        let files = try BundleFiles()
        try files.copyExample(to: "com.example.Editor")
        let strings = try files.write(
            "com.example.Editor/de.lproj/Root.strings",
            """
            "Editor" = "Texteditor";
            "Dark style" = "Dunkler Stil"
            "Theme" = ;
            """)
        let bundle = SettingsBundle.load(domain: "com.example.Editor", directory: files.root + "/com.example.Editor", languages: ["de"])
        #expect(bundle.problems.count == 1)
        #expect(bundle.problems.first?.path == strings)
        #expect(bundle.problems.first?.description.contains("line 3") == true, "\(bundle.problems)")
        #expect(bundle.title == "Editor")
        #expect(bundle.root.specifiers.count == 9)
    }

    @Test func stringsFilesInUTF16AreRead() throws {
        let files = try BundleFiles()
        try files.copyExample(to: "com.example.Editor")
        var data = Data([0xFF, 0xFE])
        data.append(try #require("\"Editor\" = \"Éditeur\";\n".data(using: .utf16LittleEndian)))
        try files.write("com.example.Editor/fr.lproj/Root.strings", data)
        let bundle = SettingsBundle.load(domain: "com.example.Editor", directory: files.root + "/com.example.Editor", languages: ["fr-CA"])
        #expect(bundle.problems == [])
        #expect(bundle.title == "Éditeur")
    }
}
