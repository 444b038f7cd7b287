/// The C both floor services (``FloorService``, ``StoreFloorService``) are made of alike:
/// failing with a message, the fixed `Read` answer, the `Changed` signal of a write, and
/// joining the bus under a name. Each service's source starts with it.
enum FloorServiceCommon {
    static let source = #"""
        #include <dbus/dbus.h>
        #include <errno.h>
        #include <signal.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>

        /* The program's name (in its messages), the object path and interface it serves. */
        static const char *program, *path, *interface;

        static void fail(const char *what, const char *why) {
            fprintf(stderr, "%s: %s: %s\n", program, what, why);
            exit(1);
        }

        /* Appends the values from `from` to its end to `to`, containers recursively. */
        static dbus_bool_t copy(DBusMessageIter *from, DBusMessageIter *to) {
            for (int type; (type = dbus_message_iter_get_arg_type(from)) != DBUS_TYPE_INVALID; dbus_message_iter_next(from)) {
                if (dbus_type_is_basic(type)) {
                    DBusBasicValue value;
                    dbus_message_iter_get_basic(from, &value);
                    if (!dbus_message_iter_append_basic(to, type, &value)) return FALSE;
                    continue;
                }
                DBusMessageIter inner, out;
                dbus_message_iter_recurse(from, &inner);
                /* A variant names its contents' type, an array its elements' (the "X" of "aX"). */
                char *signature = type == DBUS_TYPE_VARIANT ? dbus_message_iter_get_signature(&inner)
                                : type == DBUS_TYPE_ARRAY   ? dbus_message_iter_get_signature(from)
                                                            : NULL;
                const char *contained = signature == NULL ? NULL : type == DBUS_TYPE_ARRAY ? signature + 1 : signature;
                dbus_bool_t copied = dbus_message_iter_open_container(to, type, contained, &out)
                                     && copy(&inner, &out) && dbus_message_iter_close_container(to, &out);
                dbus_free(signature);
                if (!copied) return FALSE;
            }
            return TRUE;
        }

        /* Read(ss) -> (v): always int64 1, whatever the key. */
        static DBusMessage *read_value(DBusMessage *call) {
            DBusMessage *reply = dbus_message_new_method_return(call);
            DBusMessageIter body, variant;
            dbus_int64_t value = 1;
            dbus_message_iter_init_append(reply, &body);
            if (!dbus_message_iter_open_container(&body, DBUS_TYPE_VARIANT, "x", &variant)
                || !dbus_message_iter_append_basic(&variant, DBUS_TYPE_INT64, &value)
                || !dbus_message_iter_close_container(&body, &variant))
                fail("Read", "out of memory");
            return reply;
        }

        /* The arguments of Write(ssv): `value` is left at the variant. */
        static void write_arguments(DBusMessage *call, const char **domain, const char **key, DBusMessageIter *value) {
            dbus_message_iter_init(call, value);
            dbus_message_iter_get_basic(value, domain);
            dbus_message_iter_next(value);
            dbus_message_iter_get_basic(value, key);
            dbus_message_iter_next(value);
        }

        /* Sends Changed(domain, {key: value}, [], []) for Write(domain, key, value). */
        static void send_changed(DBusConnection *bus, DBusMessage *call) {
            DBusMessageIter arguments, body, changed, entry, none;
            const char *domain, *key;
            write_arguments(call, &domain, &key, &arguments);
            DBusMessage *signal = dbus_message_new_signal(path, interface, "Changed");
            dbus_message_iter_init_append(signal, &body);
            if (!dbus_message_iter_append_basic(&body, DBUS_TYPE_STRING, &domain)
                || !dbus_message_iter_open_container(&body, DBUS_TYPE_ARRAY, "{sv}", &changed)
                || !dbus_message_iter_open_container(&changed, DBUS_TYPE_DICT_ENTRY, NULL, &entry)
                || !dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &key)
                || !copy(&arguments, &entry)
                || !dbus_message_iter_close_container(&changed, &entry)
                || !dbus_message_iter_close_container(&body, &changed)
                || !dbus_message_iter_open_container(&body, DBUS_TYPE_ARRAY, "s", &none)
                || !dbus_message_iter_close_container(&body, &none)
                || !dbus_message_iter_open_container(&body, DBUS_TYPE_ARRAY, "s", &none)
                || !dbus_message_iter_close_container(&body, &none)
                || !dbus_connection_send(bus, signal, NULL))
                fail("Changed", "out of memory");
            dbus_message_unref(signal);
        }

        /* Checks the command line (ADDRESS NAME PATH INTERFACE FILE), lets SIGTERM end the
           program even when the parent (a test runner) blocks or ignores it, and keeps PATH
           and INTERFACE. */
        static void start(int argc, char **argv, const char *name, const char *file) {
            program = name;
            if (argc != 6) {
                fprintf(stderr, "usage: %s ADDRESS NAME PATH INTERFACE %s\n", program, file);
                exit(64);
            }
            sigset_t none;
            sigemptyset(&none);
            sigprocmask(SIG_SETMASK, &none, NULL);
            signal(SIGTERM, SIG_DFL);
            path = argv[3];
            interface = argv[4];
        }

        /* Connects to the bus at `address`, owns `name` (or fails: "the name is taken") and
           serves `path` with `handle`. */
        static DBusConnection *join(const char *address, const char *name, DBusHandleMessageFunction handle) {
            DBusError error;
            dbus_error_init(&error);
            DBusConnection *bus = dbus_connection_open_private(address, &error);
            if (bus == NULL) fail(address, error.message);
            if (!dbus_bus_register(bus, &error)) fail("Hello", error.message);
            int owner = dbus_bus_request_name(bus, name, DBUS_NAME_FLAG_DO_NOT_QUEUE, &error);
            if (owner != DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER)
                fail(name, dbus_error_is_set(&error) ? error.message : "the name is taken");
            DBusObjectPathVTable table = {.message_function = handle};
            if (!dbus_connection_register_object_path(bus, path, &table, NULL)) fail(path, "cannot register the object path");
            return bus;
        }

        """#
}
