import Foundation
import PackagePlugin

/// Embeds `Introspection/io.github.prefsd.Preferences1.xml` into the target as the
/// constant `introspectionXML`, and `Introspection/io.github.prefsd.Sandboxed1.xml` as
/// `sandboxIntrospectionXML`, so the service serves the files verbatim and an installed
/// binary needs no resource bundle beside it.
///
/// The generator is `scripts/embed-text`, run by `/bin/sh`, rather than a Swift executable
/// of the package: SwiftPM would build such a tool twice (its plugin-tools build and the
/// main build record it apart), and a warm build after one in the other configuration would
/// relink it, run this plugin again and relink prefsd.
@main
struct EmbedIntrospection: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let script = context.package.directoryURL.appending(path: "scripts").appending(path: "embed-text")
        let files = [
            ("io.github.prefsd.Preferences1.xml", "IntrospectionXML.swift", "introspectionXML"),
            ("io.github.prefsd.Sandboxed1.xml", "SandboxIntrospectionXML.swift", "sandboxIntrospectionXML"),
        ]
        return files.map { file, swiftFile, constant in
            let input = context.package.directoryURL.appending(path: "Introspection").appending(path: file)
            let output = context.pluginWorkDirectoryURL.appending(path: swiftFile)
            return .buildCommand(
                displayName: "Embedding \(input.lastPathComponent)",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: [script.path, input.path, output.path, constant],
                inputFiles: [input, script],
                outputFiles: [output]
            )
        }
    }
}
