#ifndef PREFSD_CGLIB_H
#define PREFSD_CGLIB_H

/* GLib alone: what the GVariant mapping (Sources/GVariantMapping) sees of C. The same module
 * map serves SwiftPM (the system-library target CGLib) and scripts/build-gio-module, which
 * compiles the mapping's sources into the GIO module with -I Sources/CGLib, so that the
 * mapping imports one name in both builds and needs nothing of GIO. */
#include <glib.h>

#endif
