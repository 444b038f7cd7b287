#ifndef PREFSD_CGIO_SHIM_H
#define PREFSD_CGIO_SHIM_H

/* GIO: its GSettings schema API (g_settings_schema_source_*, g_settings_schema_key_*), and
 * the GSettingsBackend API, which GLib hides unless asked for, for GSettingsSchemas' read-only
 * backend over values prefsd holds (StoredSettings). */
#define G_SETTINGS_ENABLE_BACKEND
#include <gio/gio.h>
#include <gio/gsettingsbackend.h>

/* The instance of StoredSettings' backend type: GLib's part, then one pointer to the Swift
 * object that answers its reads (retained by the instance, released in finalize). */
typedef struct {
    GSettingsBackend parent;
    void *values;
} PrefsdStoredSettingsInstance;

static inline GType prefsd_settings_backend_parent_type(void) { return g_settings_backend_get_type(); }

/* The properties of a GSettings that g_object_get (variadic, which Swift cannot call) reads:
 * its schema (a new reference) and its path (a new string). */
static inline GSettingsSchema *prefsd_settings_schema(GSettings *settings) {
    GSettingsSchema *schema = NULL;
    g_object_get(settings, "settings-schema", &schema, NULL);
    return schema;
}
static inline gchar *prefsd_settings_path(GSettings *settings) {
    gchar *path = NULL;
    g_object_get(settings, "path", &path, NULL);
    return path;
}

/* Text domain `domain`'s translations in UTF-8, whatever the locale's character set, as
 * gsettings asks for GLib's own (<libintl.h>, which Swift's Glibc module leaves out). */
#include <libintl.h>
static inline void prefsd_text_domain_in_utf8(const char *domain) { bind_textdomain_codeset(domain, "UTF-8"); }

/* g_print and g_printerr of one text, as gsettings prints: in the locale's character set. */
static inline void prefsd_print(const char *text) { g_print("%s", text); }
static inline void prefsd_printerr(const char *text) { g_printerr("%s", text); }

#endif
