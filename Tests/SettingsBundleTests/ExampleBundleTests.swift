import Foundation
import PreferencesModel
import SettingsBundle
import Testing

@Suite("The example settings bundle")
struct ExampleBundleTests {
    let bundle = SettingsBundle.load(domain: "com.example.Editor", directory: BundleFiles.exampleBundle, languages: ["en"])

    @Test func loadsWithoutProblems() {
        #expect(bundle.problems == [])
        #expect(bundle.title == "Editor")
        #expect(bundle.icon == "accessories-text-editor")
        #expect(
            bundle.root.specifiers.map(\.type) == [
                .group, .textField, .toggleSwitch, .slider, .multiValue, .radioGroup, .group, .titleValue, .childPane,
            ])
        #expect(Set(SpecifierType.allCases).isSubset(of: Set(bundle.panes.flatMap { $0.specifiers.map(\.type) })))
    }

    @Test func readsEveryKindOfEntry() throws {
        let slider = try #require(bundle.root.specifiers.first { $0.key == "FontSize" })
        #expect(slider.minimumValue == 8)
        #expect(slider.maximumValue == 32)
        #expect(slider.defaultValue == .integer(12))
        let theme = try #require(bundle.root.specifiers.first { $0.key == "Theme" })
        #expect(theme.titles == ["Light", "Dark", "Solarized"])
        #expect(theme.values == [.string("light"), .string("dark"), .string("solarized")])
        #expect(theme.title(for: .string("dark")) == "Dark")
        let radio = try #require(bundle.root.specifiers.first { $0.key == "LineEndings" })
        #expect(radio.footerText == "Used when saving a new file.")
        let child = try #require(bundle.root.specifiers.last)
        #expect(child.file == "Advanced")
        let advanced = try #require(bundle.pane(named: "Advanced"))
        #expect(advanced.title == "Advanced")
        #expect(advanced.specifiers.first { $0.key == "SyncToken" }?.isSecure == true)
    }

    @Test func defaultValuesCoverEveryPane() {
        #expect(
            bundle.defaultValues == [
                "NextItemName": .string("Coffee Cup"), "DarkStyle": .boolean(false), "FontSize": .integer(12),
                "Theme": .string("light"), "LineEndings": .string("lf"), "Version": .string("1.0"),
                "AutoSave": .boolean(true), "AutoSaveInterval": .real(5),
            ])
    }

    @Test func germanTitlesWithFallbackForTheUntranslated() throws {
        let german = SettingsBundle.load(domain: "com.example.Editor", directory: BundleFiles.exampleBundle, languages: ["de-AT", "fr"])
        #expect(german.problems == [])
        #expect(german.title == "Texteditor")
        let titles = german.root.specifiers.compactMap(\.title)
        #expect(titles.contains("Name des nächsten Eintrags"))
        #expect(titles.contains("Schriftgröße"))
        let theme = try #require(german.root.specifiers.first { $0.key == "Theme" })
        #expect(theme.titles == ["Hell", "Dunkel", "Solarized"])  // no translation: the bundle's own text
        #expect(theme.values == [.string("light"), .string("dark"), .string("solarized")])  // values never translated
        let advanced = try #require(german.pane(named: "Advanced"))
        #expect(advanced.title == "Erweitert")  // from Root.strings: the child pane's table falls back to it
        #expect(advanced.specifiers.compactMap(\.title).contains("Automatisch speichern"))
    }

    @Test func toggleSwitchReadsStoredValues() throws {
        let toggle = try #require(bundle.root.specifiers.first { $0.key == "DarkStyle" })
        #expect(toggle.isOn(.boolean(true)))
        #expect(toggle.isOn(.string("YES")))
        #expect(!toggle.isOn(.boolean(false)))
        #expect(!toggle.isOn(nil))
    }
}
