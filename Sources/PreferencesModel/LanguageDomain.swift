/// The language domain: `AppleLanguages` and `AppleLocale` derived from the POSIX locale
/// environment (`LANGUAGE`, `LC_ALL`, `LC_MESSAGES`, `LANG`, in that order of precedence).
public enum LanguageDomain {
    /// The domain for an environment.
    ///
    /// `LANGUAGE=de:fr` gives `AppleLanguages = (de, fr)`; `LANG=pt_BR.UTF-8` gives
    /// `AppleLanguages = (pt-BR)` and `AppleLocale = pt_BR`. The `C` and `POSIX` locales
    /// mean English (`en`, `en_US_POSIX`).
    public static func make(environment: [String: String]) -> [String: PropertyListValue] {
        let locale = ["LC_ALL", "LC_MESSAGES", "LANG"].lazy.compactMap { environment[$0] }.first { !$0.isEmpty }
        let localeName = locale.map(normalizedLocale) ?? "en_US_POSIX"
        var languages: [String] = []
        if let list = environment["LANGUAGE"], !list.isEmpty, locale.map(normalizedLocale) != "en_US_POSIX" {
            languages = list.split(separator: ":").map { languageTag(String($0)) }.filter { !$0.isEmpty }
        }
        if languages.isEmpty {
            languages = [localeName == "en_US_POSIX" ? "en" : languageTag(localeName)]
        }
        var unique: [String] = []
        for language in languages where !unique.contains(language) { unique.append(language) }
        return [
            "AppleLanguages": .array(unique.map { .string($0) }),
            "AppleLocale": .string(localeName),
        ]
    }

    /// `pt_BR.UTF-8@euro` → `pt_BR`; `C`/`POSIX` → `en_US_POSIX`.
    static func normalizedLocale(_ value: String) -> String {
        let base = value.split(separator: ".", maxSplits: 1).first.map(String.init) ?? value
        let name = base.split(separator: "@", maxSplits: 1).first.map(String.init) ?? base
        return name == "C" || name == "POSIX" || name.isEmpty ? "en_US_POSIX" : name
    }

    /// `pt_BR` → `pt-BR`, as AppleLanguages spells languages.
    static func languageTag(_ value: String) -> String {
        normalizedLocale(value).replacingOccurrences(of: "_", with: "-")
    }
}
