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
    public static var source: String { FloorServiceCommon.source + body }

    private static let body = #"""
        #include <fcntl.h>
        #include <poll.h>
        #include <unistd.h>

        /* The WAL's geometry, as SQLite writes a one-page commit: a 32-byte file header, then
           frames of a 24-byte header and a 4 KiB page; 1,000 frames, then back to the first. */
        enum { WAL_HEADER = 32, FRAME_HEADER = 24, PAGE = 4096, FRAMES = 1000 };

        static int wal;
        static long frames_written;
        static unsigned char frame[FRAME_HEADER + PAGE];

        /* Write(ssv): one WAL-shaped frame at the next offset, fdatasync, Changed(domain,
           {key: value}, [], []), then the reply. */
        static DBusMessage *write_value(DBusConnection *bus, DBusMessage *call) {
            off_t offset = WAL_HEADER + (off_t)(frames_written % FRAMES) * (FRAME_HEADER + PAGE);
            frames_written++;
            memset(frame, (int)(frames_written & 255), FRAME_HEADER);
            for (int i = FRAME_HEADER; i < (int)sizeof frame; i += 64) frame[i] = (unsigned char)frames_written;
            if (pwrite(wal, frame, sizeof frame, offset) != (ssize_t)sizeof frame || fdatasync(wal) != 0)
                return dbus_message_new_error(call, DBUS_ERROR_IO_ERROR, strerror(errno));

            send_changed(bus, call);
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
            start(argc, argv, "floor-service", "WAL-FILE");
            wal = open(argv[5], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
            if (wal < 0) fail(argv[5], strerror(errno));
            /* Written whole first, so that every frame overwrites allocated blocks (as a WAL that
               has reached its size): fdatasync then writes data, not the file's new size. */
            static unsigned char zeros[WAL_HEADER + FRAMES * (FRAME_HEADER + PAGE)];
            if (write(wal, zeros, sizeof zeros) != (ssize_t)sizeof zeros || fsync(wal) != 0) fail(argv[5], strerror(errno));

            DBusConnection *bus = join(argv[1], argv[2], handle);
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
