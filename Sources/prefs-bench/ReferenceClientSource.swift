extension ReferenceClient {
    /// `gdbus-read ADDRESS NAME PATH INTERFACE DOMAIN KEY EXPECTED`: connects to the bus at
    /// ADDRESS with GDBus, checks that `Read(DOMAIN, KEY)` answers the GVariant EXPECTED
    /// (text form, like `int64 1`) and prints `ready`. Then, for each count N read from
    /// standard input, makes N pairs of `g_dbus_connection_call_sync` calls, `Peer.Ping`
    /// then `Read`, and prints one line of 2N numbers: the nanoseconds of each call in
    /// order (ping, read, ping, read, …). A count of 0 or the end of input ends it.
    /// Every call is checked; a failure goes to standard error and exits 1.
    static let program = #"""
        #include <gio/gio.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <time.h>

        static gint64 now_ns(void) {
            struct timespec t;
            clock_gettime(CLOCK_MONOTONIC, &t);
            return (gint64)t.tv_sec * 1000000000 + t.tv_nsec;
        }

        static const char *name, *path, *interface, *domain, *key;

        /* Peer.Ping to the service; exits on failure. */
        static void ping(GDBusConnection *bus) {
            GError *error = NULL;
            GVariant *reply = g_dbus_connection_call_sync(bus, name, "/", "org.freedesktop.DBus.Peer", "Ping",
                                                          NULL, G_VARIANT_TYPE_UNIT, G_DBUS_CALL_FLAGS_NONE, -1,
                                                          NULL, &error);
            if (reply == NULL) { fprintf(stderr, "Ping: %s\n", error->message); exit(1); }
            g_variant_unref(reply);
        }

        /* Read(domain, key), reply type checked (v) as a typed client would; exits on failure. */
        static GVariant *read_value(GDBusConnection *bus) {
            GError *error = NULL;
            GVariant *reply = g_dbus_connection_call_sync(bus, name, path, interface, "Read",
                                                          g_variant_new("(ss)", domain, key), G_VARIANT_TYPE("(v)"),
                                                          G_DBUS_CALL_FLAGS_NONE, -1, NULL, &error);
            if (reply == NULL) { fprintf(stderr, "Read: %s\n", error->message); exit(1); }
            return reply;
        }

        int main(int argc, char **argv) {
            if (argc != 8) { fprintf(stderr, "usage: gdbus-read ADDRESS NAME PATH INTERFACE DOMAIN KEY EXPECTED\n"); return 64; }
            name = argv[2]; path = argv[3]; interface = argv[4]; domain = argv[5]; key = argv[6];
            GError *error = NULL;
            GDBusConnection *bus = g_dbus_connection_new_for_address_sync(
                argv[1], G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
                NULL, NULL, &error);
            if (bus == NULL) { fprintf(stderr, "connect: %s\n", error->message); return 1; }
            GVariant *expected = g_variant_parse(NULL, argv[7], NULL, NULL, &error);
            if (expected == NULL) { fprintf(stderr, "EXPECTED: %s\n", error->message); return 64; }
            GVariant *reply = read_value(bus);
            GVariant *value = NULL;
            g_variant_get(reply, "(v)", &value);
            if (!g_variant_equal(value, expected)) {
                gchar *text = g_variant_print(value, TRUE);
                fprintf(stderr, "Read answered %s, not %s\n", text, argv[7]);
                return 1;
            }
            g_variant_unref(value);
            g_variant_unref(reply);
            printf("ready\n");
            fflush(stdout);

            int count;
            while (scanf("%d", &count) == 1 && count > 0) {
                gint64 *samples = g_new(gint64, 2 * count);
                for (int i = 0; i < count; i++) {
                    gint64 start = now_ns();
                    ping(bus);
                    gint64 middle = now_ns();
                    g_variant_unref(read_value(bus));
                    samples[2 * i] = middle - start;
                    samples[2 * i + 1] = now_ns() - middle;
                }
                for (int i = 0; i < 2 * count; i++) printf(i ? " %" G_GINT64_FORMAT : "%" G_GINT64_FORMAT, samples[i]);
                printf("\n");
                fflush(stdout);
                g_free(samples);
            }
            g_object_unref(bus);
            return 0;
        }
        """#
}
