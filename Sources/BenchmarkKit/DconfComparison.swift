/// The rows of `prefs-bench --only-dconf`: prefsd serving dconf's protocol beside Debian's
/// dconf-service, and prefsd's own `Write` with and without the dconf mirror. Figures only:
/// each target is printed beside its ratio, not judged.
public struct DconfComparison: Sendable {
    /// `dconf write` as a whole process at 0 keys: dconf-service, then prefsd --dconf.
    public var dconfWrite: (dconf: Figure, prefsd: Figure)
    /// One key's `Change` through the bus at ``keys`` keys: dconf-service, then prefsd --dconf.
    public var change: (dconf: Figure, prefsd: Figure)
    /// `gsettings get` as a whole process on the dconf backend: dconf-service's file, then
    /// prefsd's mirror.
    public var gsettingsGet: (dconf: Figure, prefsd: Figure)
    /// prefsd's durable `Write` at ``keys`` keys: without `--dconf`, then with it.
    public var nativeWrite: (plain: Figure, mirrored: Figure)
    /// How many keys the database holds for the `Change` and `Write` rows.
    public var keys: Int

    /// The rows from their figures.
    public init(
        dconfWrite: (Figure, Figure), change: (Figure, Figure), gsettingsGet: (Figure, Figure), nativeWrite: (Figure, Figure),
        keys: Int
    ) {
        self.dconfWrite = dconfWrite
        self.change = change
        self.gsettingsGet = gsettingsGet
        self.nativeWrite = nativeWrite
        self.keys = keys
    }

    /// The rows as a Markdown table: both sides' p50 / p99 (with the count of rounds), the
    /// ratio of their medians as the target states it, and the target.
    public func render() -> String {
        var table = MarkdownTable(header: ["figure", "side A", "A p50 / p99", "side B", "B p50 / p99", "ratio (p50)", "target"])
        let keys = Self.grouped(self.keys)
        table.add([
            "`dconf write /bench/k` (1 and 2 in turn), whole process, 0 keys", "dconf-service", dconfWrite.dconf.countedText,
            "prefsd --dconf", dconfWrite.prefsd.countedText, Self.ratio("prefsd/dconf", dconfWrite.prefsd, dconfWrite.dconf), "≤ 1.1×",
        ])
        table.add([
            "`Change` of one key (bus round trip), \(keys) keys", "dconf-service", change.dconf.countedText,
            "prefsd --dconf", change.prefsd.countedText, Self.ratio("dconf/prefsd", change.dconf, change.prefsd), "≥ 10×",
        ])
        table.add([
            "`gsettings get` (GSETTINGS_BACKEND=dconf), whole process", "dconf-service's file", gsettingsGet.dconf.countedText,
            "prefsd's mirror", gsettingsGet.prefsd.countedText, Self.ratio("prefsd/dconf", gsettingsGet.prefsd, gsettingsGet.dconf),
            "the same",
        ])
        table.add([
            "prefsd durable `Write`, \(keys) keys", "prefsd", nativeWrite.plain.countedText, "prefsd --dconf",
            nativeWrite.mirrored.countedText, Self.ratio("with/without", nativeWrite.mirrored, nativeWrite.plain), "≤ 1.10×",
        ])
        return table.render()
    }

    /// "name 1.23×": the ratio of two medians, or "–" when one is missing.
    static func ratio(_ name: String, _ numerator: Figure, _ denominator: Figure) -> String {
        guard let a = numerator.summary, let b = denominator.summary else { return "–" }
        return "\(name) \(Format.ratio(a.median / b.median))"
    }

    /// `n` with a comma between groups of three digits ("10,000").
    static func grouped(_ n: Int) -> String {
        var digits = String(n.magnitude)
        var groups: [Substring] = []
        while digits.count > 3 {
            groups.insert(Substring(digits.suffix(3)), at: 0)
            digits.removeLast(3)
        }
        groups.insert(Substring(digits), at: 0)
        return (n < 0 ? "-" : "") + groups.joined(separator: ",")
    }
}
