#ifndef PREFSD_CGSETTINGSBACKEND_H
#define PREFSD_CGSETTINGSBACKEND_H

/* What the GSettings backend module (Embedded Swift, built by scripts/build-gio-module)
 * sees of C: GIO with the GSettingsBackend API, which GLib hides unless asked for, the
 * instance struct of the backend's GObject type, and the macros Swift cannot import. */
#define G_SETTINGS_ENABLE_BACKEND
#include <gio/gio.h>
#include <gio/gsettingsbackend.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Maps the snapshot file `name` of prefsd's snapshot directory `directory` read-only and
 * shared (so prefsd's flip of its validity flag is seen), setting `*length`; NULL when the
 * directory is not a private directory of the user's, or the file is not a regular file of
 * the user's of 1 to `limit` bytes. (open is variadic: Embedded Swift cannot call it.) */
static inline const void *prefsd_snapshot_map(const char *directory, const char *name, size_t limit, size_t *length) {
    struct stat info;
    const void *mapping = NULL;
    int dir = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir < 0) return NULL;
    if (fstat(dir, &info) != 0 || info.st_uid != getuid() || (info.st_mode & 077) != 0) {
        close(dir);
        return NULL;
    }
    int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    close(dir);
    if (fd < 0) return NULL;
    if (fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_uid == getuid()
        && info.st_size > 0 && (unsigned long long)info.st_size <= limit) {
        void *made = mmap(NULL, (size_t)info.st_size, PROT_READ, MAP_SHARED, fd, 0);
        if (made != MAP_FAILED) {
            mapping = made;
            *length = (size_t)info.st_size;
        }
    }
    close(fd);
    return mapping;
}

static inline void prefsd_snapshot_unmap(const void *mapping, size_t length) { munmap((void *)mapping, length); }

/* The byte at `offset` of a mapping another process writes (read anew each time). */
static inline unsigned char prefsd_snapshot_byte(const void *mapping, size_t offset) {
    return __atomic_load_n((const unsigned char *)mapping + offset, __ATOMIC_ACQUIRE);
}

#endif
