import GSettingsPaths
import GSettingsSchemas
import Gtk

/// The installed GSettings schemas, read once when the app first needs them.
enum SchemaCatalog {
    /// GLib's default schema source (`XDG_DATA_DIRS`, `GSETTINGS_SCHEMA_DIR`).
    static let shared = SchemaSource()

    /// The schemas at their paths in `domain`, given the domain's stored keys.
    static func instances(_ domain: String, controller: SettingsController) -> [SchemaInstance] {
        shared.instances(inDomain: domain, storedKeys: controller.values(in: domain).keys)
    }

    /// What search matches in a schema-described domain: its schemas' ids, key names and summaries.
    static func searchText(_ domain: String) -> [String] {
        shared.fixedSchemas(inDomain: domain).flatMap { schema in
            [schema.id] + schema.keys.flatMap { [$0.name, $0.summary ?? ""] }
        }
    }
}

/// The page of a domain that installed GSettings schemas describe (through the path rule):
/// one row per schema at its path, each opening the schema's page, and a row opening the
/// raw editor for keys no schema declares. A domain of a single schema and no other keys
/// opens straight on the schema's page (``SchemaPages/root(for:controller:push:)``).
final class SchemaDomainPage: DomainPage {
    let domain: String
    var title: String { domain }
    var widget: Widget { page }
    private let page = PreferencesPage()
    private let group = PreferencesGroup(title: "Schemas", description: "GSettings schemas whose keys are in this domain.")
    private var rows: [String: ActionRow] = [:]
    private unowned let controller: SettingsController
    private let push: (any DomainPage) -> Void

    init(domain: String, controller: SettingsController, push: @escaping (any DomainPage) -> Void) {
        self.domain = domain
        self.controller = controller
        self.push = push
        page.add(group)
        let rawGroup = PreferencesGroup(title: nil)
        let rawRow = ActionRow(title: "All keys", subtitle: "Every stored key of \(domain) as prefsd holds it (the raw editor)")
        let rawButton = Button(iconName: "go-next-symbolic", label: "Open all keys")
        rawButton.addStyleClass("flat")
        rawButton.centerVertically()
        rawButton.onClicked { [weak self] in
            guard let self else { return }
            self.push(RawEditorPage(domain: self.domain, controller: self.controller))
        }
        rawRow.addSuffix(rawButton)
        rawGroup.add(rawRow)
        page.add(rawGroup)
        refresh()
    }

    /// Adds rows for schemas found at new paths (a profile just created).
    func refresh() {
        for instance in SchemaCatalog.instances(domain, controller: controller) where rows[instance.path] == nil {
            let row = ActionRow(title: instance.schema.id, subtitle: instance.path + (instance.isRelocated ? " (relocatable)" : ""))
            row.usePlainText()
            let open = Button(iconName: "go-next-symbolic", label: "Open \(instance.schema.id) at \(instance.path)")
            open.addStyleClass("flat")
            open.centerVertically()
            open.onClicked { [weak self] in
                guard let self else { return }
                self.push(SchemaPage(instance: instance, controller: self.controller, push: self.push))
            }
            row.addSuffix(open)
            group.add(row)
            rows[instance.path] = row
        }
    }
}

/// Which page a domain opens on when schemas describe it.
enum SchemaPages {
    /// The first page of `domain`: the schema's page when one schema describes the whole
    /// domain, the list of its schemas when several do, `nil` when none does.
    static func root(for domain: String, controller: SettingsController, push: @escaping (any DomainPage) -> Void) -> (any DomainPage)? {
        let instances = SchemaCatalog.instances(domain, controller: controller)
        guard let first = instances.first else { return nil }
        if instances.count == 1 {
            let declared = Set(first.schema.keys.compactMap { first.prefsdKey($0.name) })
            if controller.values(in: domain).keys.allSatisfy(declared.contains) {
                return SchemaPage(instance: first, controller: controller, push: push)
            }
        }
        return SchemaDomainPage(domain: domain, controller: controller, push: push)
    }
}

extension SchemaPages {
    /// The domain of a GSettings path given on the command line (`/org/gnome/desktop/interface/`
    /// or a key, `/org/gnome/desktop/interface/color-scheme`), `nil` for a domain name.
    static func domain(ofPath argument: String) -> String? {
        guard argument.hasPrefix("/"), let slash = argument.lastIndex(of: "/") else { return nil }
        return GSettingsPath.domain(ofDirectory: String(argument[...slash]))
    }

    /// Opens the schema page of the directory in `path` over `pages` (the domain's first
    /// page), then the key's page when `path` names a key.
    static func open(path: String, over pages: [any DomainPage], controller: SettingsController, push: @escaping (any DomainPage) -> Void) {
        guard let slash = path.lastIndex(of: "/"), let domain = domain(ofPath: path) else { return }
        let directory = String(path[...slash]), name = String(path[path.index(after: slash)...])
        guard let instance = SchemaCatalog.instances(domain, controller: controller).first(where: { $0.path == directory }) else { return }
        if !pages.contains(where: { ($0 as? SchemaPage)?.instance.path == directory }) {
            push(SchemaPage(instance: instance, controller: controller, push: push))
        }
        if let key = instance.schema.keysByName[name] {
            push(SchemaKeyPage(key: key, instance: instance, controller: controller))
        }
    }
}
