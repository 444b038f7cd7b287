#ifndef PREFSD_CGIO_SHIM_H
#define PREFSD_CGIO_SHIM_H

/* GIO with the GSettingsBackend API, which GLib hides unless asked for. */
#define G_SETTINGS_ENABLE_BACKEND
#include <gio/gio.h>
#include <gio/gsettingsbackend.h>

/* GObject's type macros do not import into Swift; these do what they do. */
static inline GType cgio_settings_backend_type(void) { return g_settings_backend_get_type(); }
static inline GTypeModule *cgio_type_module(GIOModule *module) { return G_TYPE_MODULE(module); }
static inline const char *cgio_settings_backend_extension_point(void) { return G_SETTINGS_BACKEND_EXTENSION_POINT_NAME; }

/* The GTree of write_tree, walked into a callback (g_tree_foreach with a Swift context). */
typedef void (*cgio_tree_visitor)(const char *key, GVariant *value, void *context);
struct cgio_tree_walk { cgio_tree_visitor visit; void *context; };
static inline gboolean cgio_tree_step(gpointer key, gpointer value, gpointer data) {
    struct cgio_tree_walk *walk = data;
    walk->visit((const char *)key, (GVariant *)value, walk->context);
    return FALSE;
}
static inline void cgio_tree_foreach(GTree *tree, cgio_tree_visitor visit, void *context) {
    struct cgio_tree_walk walk = { visit, context };
    g_tree_foreach(tree, cgio_tree_step, &walk);
}

#endif
