extension ReferenceClient {
    /// `gdbus-client ADDRESS PATH INTERFACE SYNC-FILE`: connects to the bus at ADDRESS with
    /// GDBus, writes SYNC-FILE's first 4 KiB durably and prints `ready`. Then it reads
    /// commands from standard input, one a line, and calls the service NAME at PATH on
    /// INTERFACE with `g_dbus_connection_call_sync`:
    /// - `check NAME DOMAIN KEY VALUE`: `Read(DOMAIN, KEY)`; prints `ok` when it answers the
    ///   GVariant VALUE (text form, like `int64 1`), else says so on standard error and exits 1;
    /// - `read NAMES DOMAIN KEY N`: N rounds; in each, for every service of NAMES (up to 4,
    ///   comma-separated; every other round in reverse order), `Peer.Ping` then `Read`. Prints
    ///   one line of 2 × N × services numbers: the nanoseconds of each call, round by round,
    ///   in each round service by service in NAMES's order (ping, read, ping, read, …);
    /// - `write NAMES DOMAIN KEY N`: the same with `Peer.Ping`, `Write(DOMAIN, KEY, <int64 n>)`
    ///   (n counting up from 1 across the run) and 4 KiB over SYNC-FILE's first block with
    ///   `fdatasync`: 3 numbers per service and round (ping, write, sync, …);
    /// - `quit`, an empty line or the end of input ends it.
    /// Every call is checked (the reply's type too, as a typed client would); a failure goes
    /// to standard error and exits 1.
    static let program = #"""
        #include <fcntl.h>
        #include <gio/gio.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>
        #include <time.h>
        #include <unistd.h>

        static gint64 now_ns(void) {
            struct timespec t;
            clock_gettime(CLOCK_MONOTONIC, &t);
            return (gint64)t.tv_sec * 1000000000 + t.tv_nsec;
        }

        static GDBusConnection *bus;
        static const char *path, *interface;
        static int sync_file;
        enum { MAX_SERVICES = 4 };
        static gint64 serial;

        static void fail(const char *what, GError *error) {
            fprintf(stderr, "%s: %s\n", what, error->message);
            exit(1);
        }

        /* Peer.Ping to the service; exits on failure. */
        static void ping(const char *name) {
            GError *error = NULL;
            GVariant *reply = g_dbus_connection_call_sync(bus, name, "/", "org.freedesktop.DBus.Peer", "Ping", NULL,
                                                          G_VARIANT_TYPE_UNIT, G_DBUS_CALL_FLAGS_NONE, -1, NULL, &error);
            if (reply == NULL) fail("Ping", error);
            g_variant_unref(reply);
        }

        /* Read(domain, key), reply type checked (v) as a typed client would; exits on failure. */
        static GVariant *read_value(const char *name, const char *domain, const char *key) {
            GError *error = NULL;
            GVariant *reply = g_dbus_connection_call_sync(bus, name, path, interface, "Read", g_variant_new("(ss)", domain, key),
                                                          G_VARIANT_TYPE("(v)"), G_DBUS_CALL_FLAGS_NONE, -1, NULL, &error);
            if (reply == NULL) fail("Read", error);
            return reply;
        }

        /* Write(domain, key, <int64 n>) of the next number, the reply checked empty; exits on failure. */
        static void write_value(const char *name, const char *domain, const char *key) {
            GError *error = NULL;
            GVariant *reply = g_dbus_connection_call_sync(
                bus, name, path, interface, "Write", g_variant_new("(ssv)", domain, key, g_variant_new_int64(++serial)),
                G_VARIANT_TYPE_UNIT, G_DBUS_CALL_FLAGS_NONE, -1, NULL, &error);
            if (reply == NULL) fail("Write", error);
            g_variant_unref(reply);
        }

        /* 4 KiB over the start of the sync file, then fdatasync: the disk's floor. */
        static void sync_page(void) {
            static char page[4096];
            page[0]++;
            if (pwrite(sync_file, page, sizeof page, 0) != (ssize_t)sizeof page || fdatasync(sync_file) != 0) {
                perror("fdatasync");
                exit(1);
            }
        }

        static void print_samples(const gint64 *samples, int count) {
            for (int i = 0; i < count; i++) printf(i ? " %" G_GINT64_FORMAT : "%" G_GINT64_FORMAT, samples[i]);
            printf("\n");
            fflush(stdout);
        }

        int main(int argc, char **argv) {
            if (argc != 5) {
                fprintf(stderr, "usage: gdbus-client ADDRESS PATH INTERFACE SYNC-FILE\n");
                return 64;
            }
            path = argv[2];
            interface = argv[3];
            GError *error = NULL;
            bus = g_dbus_connection_new_for_address_sync(
                argv[1], G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION, NULL,
                NULL, &error);
            if (bus == NULL) fail("connect", error);
            sync_file = open(argv[4], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
            if (sync_file < 0) {
                perror(argv[4]);
                return 1;
            }
            sync_page();
            printf("ready\n");
            fflush(stdout);

            char line[4096], command[16], names[1024], name[256], domain[256], key[256];
            int count, rest;
            while (fgets(line, sizeof line, stdin) != NULL) {
                line[strcspn(line, "\n")] = 0;
                if (sscanf(line, "check %255s %255s %255s %n", name, domain, key, &rest) == 3) {
                    GVariant *expected = g_variant_parse(NULL, line + rest, NULL, NULL, &error);
                    if (expected == NULL) fail("check: the expected value", error);
                    GVariant *reply = read_value(name, domain, key), *value = NULL;
                    g_variant_get(reply, "(v)", &value);
                    if (!g_variant_equal(value, expected)) {
                        gchar *text = g_variant_print(value, TRUE);
                        fprintf(stderr, "Read of %s %s from %s answered %s, not %s\n", domain, key, name, text, line + rest);
                        return 1;
                    }
                    g_variant_unref(value);
                    g_variant_unref(reply);
                    g_variant_unref(expected);
                    printf("ok\n");
                    fflush(stdout);
                } else if (sscanf(line, "%15s %1023s %255s %255s %d", command, names, domain, key, &count) == 5 && count > 0
                           && (strcmp(command, "read") == 0 || strcmp(command, "write") == 0)) {
                    const char *services[MAX_SERVICES];
                    int n = 0;
                    char *save = NULL;
                    for (char *token = strtok_r(names, ",", &save); token != NULL && n < MAX_SERVICES; token = strtok_r(NULL, ",", &save))
                        services[n++] = token;
                    int writes = command[0] == 'w', lanes = writes ? 3 : 2;
                    gint64 *samples = g_new(gint64, (gsize)lanes * n * count);
                    for (int i = 0; i < count; i++) {
                        for (int t = 0; t < n; t++) {
                            /* Every other round in reverse order, so that no service always follows another. */
                            int s = i % 2 == 0 ? t : n - 1 - t;
                            gint64 *round = samples + ((gsize)i * n + s) * lanes;
                            gint64 start = now_ns();
                            ping(services[s]);
                            gint64 pinged = now_ns();
                            if (writes) write_value(services[s], domain, key);
                            else g_variant_unref(read_value(services[s], domain, key));
                            gint64 called = now_ns();
                            round[0] = pinged - start;
                            round[1] = called - pinged;
                            if (writes) {
                                sync_page();
                                round[2] = now_ns() - called;
                            }
                        }
                    }
                    print_samples(samples, lanes * n * count);
                    g_free(samples);
                } else if (strcmp(line, "quit") == 0 || line[0] == 0) {
                    break;
                } else {
                    fprintf(stderr, "gdbus-client: not a command: %s\n", line);
                    return 64;
                }
            }
            g_object_unref(bus);
            return 0;
        }
        """#
}
