/// The floor service: a minimal D-Bus service in C on libdbus, what prefsd does for `Read`
/// and a durable `Write` minus everything else, so that the benchmark can show how close to
/// the achievable prefsd is (not only how close to `Peer.Ping`). `prefs-bench` compiles
/// ``source`` when it runs (`pkg-config dbus-1`: libdbus-1-dev) and times it beside prefsd
/// with the GDBus reference client.
///
/// `floor-service ADDRESS NAME PATH INTERFACE WAL-FILE` connects to the bus at ADDRESS, owns
/// NAME (or exits 1 saying why), writes WAL-FILE whole (``walBytes`` of zeros, fsync), exports
/// PATH, prints `ready` and then, on one thread (`dbus_connection_read_write_dispatch`),
/// answers on INTERFACE:
/// - `Read(ss) → (v)`: ``readAnswer`` whatever the domain and key, without looking them up;
/// - `Write(ssv)`: a ``frameBytes``-byte frame (a WAL frame's 24-byte header and a 4 KiB page)
///   written at the next of ``frames`` offsets after a ``walHeaderBytes``-byte header (as
///   SQLite's WAL writes a one-page commit into a file of its full size), `fdatasync`, the
///   signal `Changed(s domain, a{sv} {key: value}, as [], as [])`, then the empty reply; an
///   error reply (`org.freedesktop.DBus.Error.IOError`) when the write or the sync fails;
/// - anything else on INTERFACE: `org.freedesktop.DBus.Error.UnknownMethod`.
///
/// libdbus answers `org.freedesktop.DBus.Peer.Ping` itself, as it does in prefsd. Every byte
/// of frame `n` (counted from 1) is `n % 256` in its header and at every 64th byte of its page.
/// The service ends when its standard input ends (read or closed: the parent is done or
/// gone) or the bus connection closes; its standard input must be a pipe the parent keeps open.
public enum FloorService {
    /// The executable's name (and its source file's, with `.c`).
    public static let executableName = "floor-service"
    /// The name it owns on the benchmark's private bus, beside prefsd's.
    public static let busName = "io.github.prefsd.BenchFloor"
    /// The answer to every `Read`, as GVariant text: the value of the key the benchmark reads
    /// from prefsd (`bench.big probe`), so that both replies carry the same bytes.
    public static let readAnswer = "int64 1"
    /// The WAL file's header, before the first frame.
    public static let walHeaderBytes = 32
    /// One frame: a 24-byte frame header and a 4 KiB page.
    public static let frameBytes = 24 + 4096
    /// Frames before the writes start again at the first (SQLite checkpoints and rewinds its
    /// WAL every 1,000 pages).
    public static let frames = 1000
    /// The WAL file's size, written whole before the first `Write`.
    public static var walBytes: Int { walHeaderBytes + frames * frameBytes }

    /// The command line after the executable.
    public static func arguments(address: String, path: String, interface: String, walFile: String) -> [String] {
        [address, busName, path, interface, walFile]
    }

    /// The C source.
    public static let source = #"""
        #include <dbus/dbus.h>
        #include <errno.h>
        #include <fcntl.h>
        #include <poll.h>
        #include <signal.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>
        #include <unistd.h>

        /* The WAL's geometry, as SQLite writes a one-page commit: a 32-byte file header, then
           frames of a 24-byte header and a 4 KiB page; 1,000 frames, then back to the first. */
        enum { WAL_HEADER = 32, FRAME_HEADER = 24, PAGE = 4096, FRAMES = 1000 };

        static const char *path, *interface;
        static int wal;
        static long frames_written;
        static unsigned char frame[FRAME_HEADER + PAGE];

        static void fail(const char *what, const char *why) {
            fprintf(stderr, "floor-service: %s: %s\n", what, why);
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

        /* Write(ssv): one WAL-shaped frame at the next offset, fdatasync, Changed(domain,
           {key: value}, [], []), then the reply. */
        static DBusMessage *write_value(DBusConnection *bus, DBusMessage *call) {
            off_t offset = WAL_HEADER + (off_t)(frames_written % FRAMES) * (FRAME_HEADER + PAGE);
            frames_written++;
            memset(frame, (int)(frames_written & 255), FRAME_HEADER);
            for (int i = FRAME_HEADER; i < (int)sizeof frame; i += 64) frame[i] = (unsigned char)frames_written;
            if (pwrite(wal, frame, sizeof frame, offset) != (ssize_t)sizeof frame || fdatasync(wal) != 0)
                return dbus_message_new_error(call, DBUS_ERROR_IO_ERROR, strerror(errno));

            DBusMessageIter arguments, changed, entry, none;
            const char *domain, *key;
            dbus_message_iter_init(call, &arguments);
            dbus_message_iter_get_basic(&arguments, &domain);
            dbus_message_iter_next(&arguments);
            dbus_message_iter_get_basic(&arguments, &key);
            dbus_message_iter_next(&arguments);
            DBusMessage *signal = dbus_message_new_signal(path, interface, "Changed");
            DBusMessageIter body;
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
            return dbus_message_new_method_return(call);
        }

        static DBusHandlerResult handle(DBusConnection *bus, DBusMessage *call, void *unused) {
            (void)unused;
            if (dbus_message_get_type(call) != DBUS_MESSAGE_TYPE_METHOD_CALL || !dbus_message_has_interface(call, interface))
                return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
            DBusMessage *reply;
            if (dbus_message_has_member(call, "Read") && dbus_message_has_signature(call, "ss"))
                reply = read_value(call);
            else if (dbus_message_has_member(call, "Write") && dbus_message_has_signature(call, "ssv"))
                reply = write_value(bus, call);
            else
                reply = dbus_message_new_error(call, DBUS_ERROR_UNKNOWN_METHOD, "this service answers Read(ss) and Write(ssv) only");
            if (reply == NULL || !dbus_connection_send(bus, reply, NULL)) fail("reply", "out of memory");
            dbus_message_unref(reply);
            return DBUS_HANDLER_RESULT_HANDLED;
        }

        int main(int argc, char **argv) {
            if (argc != 6) {
                fprintf(stderr, "usage: floor-service ADDRESS NAME PATH INTERFACE WAL-FILE\n");
                return 64;
            }
            /* SIGTERM ends it even when the parent (a test runner) blocks or ignores it. */
            sigset_t none;
            sigemptyset(&none);
            sigprocmask(SIG_SETMASK, &none, NULL);
            signal(SIGTERM, SIG_DFL);
            path = argv[3];
            interface = argv[4];
            wal = open(argv[5], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
            if (wal < 0) fail(argv[5], strerror(errno));
            /* Written whole first, so that every frame overwrites allocated blocks (as a WAL that
               has reached its size): fdatasync then writes data, not the file's new size. */
            static unsigned char zeros[WAL_HEADER + FRAMES * (FRAME_HEADER + PAGE)];
            if (write(wal, zeros, sizeof zeros) != (ssize_t)sizeof zeros || fsync(wal) != 0) fail(argv[5], strerror(errno));

            DBusError error;
            dbus_error_init(&error);
            DBusConnection *bus = dbus_connection_open_private(argv[1], &error);
            if (bus == NULL) fail(argv[1], error.message);
            if (!dbus_bus_register(bus, &error)) fail("Hello", error.message);
            int owner = dbus_bus_request_name(bus, argv[2], DBUS_NAME_FLAG_DO_NOT_QUEUE, &error);
            if (owner != DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER)
                fail(argv[2], dbus_error_is_set(&error) ? error.message : "the name is taken");
            DBusObjectPathVTable table = {.message_function = handle};
            if (!dbus_connection_register_object_path(bus, path, &table, NULL)) fail(path, "cannot register the object path");
            printf("ready\n");
            fflush(stdout);

            /* One message at a time; between messages (and at least every 200 ms) a look at
               standard input: its end (the parent gone or done) ends the service, as does the bus's. */
            while (dbus_connection_read_write_dispatch(bus, 200)) {
                struct pollfd input = {.fd = 0, .events = POLLIN};
                if (poll(&input, 1, 0) > 0) {
                    char scratch[256];
                    if (read(0, scratch, sizeof scratch) <= 0) break;
                }
            }
            return 0;
        }
        """#
}
