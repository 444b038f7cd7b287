import Foundation
import PackagePlugin

/// Embeds `Introspection/io.github.prefsd.Preferences1.xml` into the target as the
/// constant `introspectionXML`, and `Introspection/io.github.prefsd.Sandboxed1.xml` as
/// `sandboxIntrospectionXML`, so the service serves the files verbatim and an installed
/// binary needs no resource bundle beside it.
@main
struct EmbedIntrospection: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let embed = try context.tool(named: "embed-introspection").url
        let files = [
            ("io.github.prefsd.Preferences1.xml", "IntrospectionXML.swift", "introspectionXML"),
            ("io.github.prefsd.Sandboxed1.xml", "SandboxIntrospectionXML.swift", "sandboxIntrospectionXML"),
        ]
        return files.map { file, swiftFile, constant in
            let input = context.package.directoryURL.appending(path: "Introspection").appending(path: file)
            let output = context.pluginWorkDirectoryURL.appending(path: swiftFile)
            return .buildCommand(
                displayName: "Embedding \(input.lastPathComponent)",
                executable: embed,
                arguments: [input.path, output.path, constant],
                inputFiles: [input],
                outputFiles: [output]
            )
        }
    }
}
