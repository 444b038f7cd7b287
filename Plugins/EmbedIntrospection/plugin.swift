import Foundation
import PackagePlugin

/// Embeds `Introspection/io.github.prefsd.Preferences1.xml` into the target as the
/// constant `introspectionXML`, so the service serves the file verbatim and an installed
/// binary needs no resource bundle beside it.
@main
struct EmbedIntrospection: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let input = context.package.directoryURL
            .appending(path: "Introspection")
            .appending(path: "io.github.prefsd.Preferences1.xml")
        let output = context.pluginWorkDirectoryURL.appending(path: "IntrospectionXML.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(input.lastPathComponent)",
                executable: try context.tool(named: "embed-text").url,
                arguments: [input.path, output.path, "introspectionXML"],
                inputFiles: [input],
                outputFiles: [output]
            ),
        ]
    }
}
