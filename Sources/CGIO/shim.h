#ifndef PREFSD_CGIO_SHIM_H
#define PREFSD_CGIO_SHIM_H

/* GIO: its GSettings schema API (g_settings_schema_source_*, g_settings_schema_key_*). */
#include <gio/gio.h>

#endif
