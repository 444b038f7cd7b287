#ifndef PREFSD_CGSETTINGSBACKEND_H
#define PREFSD_CGSETTINGSBACKEND_H

/* What the GSettings backend module (Embedded Swift, built by scripts/build-gio-module)
 * sees of C: GIO with the GSettingsBackend API, which GLib hides unless asked for, the
 * instance struct of the backend's GObject type, and the macros Swift cannot import. */
#define G_SETTINGS_ENABLE_BACKEND
/* GLib through the module CGLib (Sources/CGLib, on the include path), which the GVariant
 * mapping's sources import: its declarations then belong to one module, which this one
 * re-exports, rather than to whichever of the two included <glib.h> first. */
#include "CGLib.h"
#include <gio/gio.h>
#include <gio/gsettingsbackend.h>
#include <string.h>
#include <fcntl.h>
#include <errno.h>
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

/* fcntl's open file description lock test (Linux), named by <fcntl.h> only under _GNU_SOURCE. */
#ifndef F_OFD_GETLK
#define F_OFD_GETLK 36
#endif

/* Opens the snapshot file `name` of prefsd's snapshot directory `directory` and reads all
 * of it into a new buffer (`*content`, g_free it; `*length` bytes); returns the descriptor,
 * kept to check the snapshot's validity, or -1 when the directory is not a private
 * directory of the user's, the file is not a regular file of the user's of 1 to `limit`
 * bytes, or it changed size while read. Read, never mapped: a file another process
 * truncates cannot fault the program. (open is variadic: Embedded Swift cannot call it.) */
static inline int prefsd_snapshot_open(const char *directory, const char *name, size_t limit, void **content, size_t *length) {
    struct stat info;
    int dir = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir < 0) return -1;
    if (fstat(dir, &info) != 0 || info.st_uid != getuid() || (info.st_mode & 077) != 0) {
        close(dir);
        return -1;
    }
    int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    close(dir);
    if (fd < 0) return -1;
    if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_uid != getuid()
        || info.st_size <= 0 || (unsigned long long)info.st_size > limit) {
        close(fd);
        return -1;
    }
    size_t size = (size_t)info.st_size;
    /* One byte more than the size: a file that grew meanwhile is seen. */
    unsigned char *buffer = g_try_malloc(size + 1);
    if (buffer == NULL) {
        close(fd);
        return -1;
    }
    size_t done = 0;
    while (done <= size) {
        ssize_t got = pread(fd, buffer + done, size + 1 - done, (off_t)done);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        done += (size_t)got;
    }
    if (done != size) {
        g_free(buffer);
        close(fd);
        return -1;
    }
    *content = buffer;
    *length = size;
    return fd;
}

/* Whether the snapshot open as `fd` may still be read: its flag (the byte at `flag_offset`,
 * read anew) is `valid`, and the prefsd that wrote it still holds its read lock on the file
 * (the kernel drops it when that prefsd exits). pread and fcntl: nothing another process
 * does to the file can make this fault. */
static inline int prefsd_snapshot_check(int fd, size_t flag_offset, unsigned char valid) {
    unsigned char flag = 0;
    if (pread(fd, &flag, 1, (off_t)flag_offset) != 1 || flag != valid) return 0;
    struct flock lock;
    memset(&lock, 0, sizeof lock);
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    if (fcntl(fd, F_OFD_GETLK, &lock) != 0) return 0;
    return lock.l_type == F_RDLCK;
}

static inline void prefsd_snapshot_close(int fd) { close(fd); }

#endif
