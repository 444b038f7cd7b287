#ifndef PREFSD_CGSETTINGSBACKEND_H
#define PREFSD_CGSETTINGSBACKEND_H

/* What the GSettings backend module (Embedded Swift, built by scripts/build-gio-module)
 * sees of C: GIO with the GSettingsBackend API, which GLib hides unless asked for, the
 * instance struct of the backend's GObject type, and the macros Swift cannot import. */
#define G_SETTINGS_ENABLE_BACKEND
#include <gio/gio.h>
#include <gio/gsettingsbackend.h>
#include <string.h>

/* The instance of PrefsdSettingsBackend: GLib's part, then one pointer to the Swift object
 * that does the work (retained by the instance, released in finalize). */
typedef struct {
    GSettingsBackend parent;
    void *backend;
} PrefsdSettingsBackendInstance;

static inline GType prefsd_settings_backend_parent_type(void) { return g_settings_backend_get_type(); }
static inline GTypeModule *prefsd_type_module(GIOModule *module) { return G_TYPE_MODULE(module); }
static inline const char *prefsd_settings_backend_extension_point(void) { return G_SETTINGS_BACKEND_EXTENSION_POINT_NAME; }

/* The GTree of write_tree, walked into a callback (g_tree_foreach with a Swift context). */
typedef void (*prefsd_tree_visitor)(const char *key, GVariant *value, void *context);
struct prefsd_tree_walk { prefsd_tree_visitor visit; void *context; };
static inline gboolean prefsd_tree_step(gpointer key, gpointer value, gpointer data) {
    struct prefsd_tree_walk *walk = data;
    walk->visit((const char *)key, (GVariant *)value, walk->context);
    return FALSE;
}
static inline void prefsd_tree_foreach(GTree *tree, prefsd_tree_visitor visit, void *context) {
    struct prefsd_tree_walk walk = { visit, context };
    g_tree_foreach(tree, prefsd_tree_step, &walk);
}

/* g_log with a plain message (Swift cannot call C variadic functions in Embedded mode). */
static inline void prefsd_log_message(const char *message) {
    g_log("prefsd", G_LOG_LEVEL_MESSAGE, "%s", message);
}

/* A GMutex and a GCond, allocated together (their address must not move). */
typedef struct { GMutex mutex; GCond cond; } prefsd_lock;

#endif
