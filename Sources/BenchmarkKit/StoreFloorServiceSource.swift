/// The store floor: a minimal D-Bus service in C that keeps what it is written in SQLite the
/// way prefsd does, with prefsd's shape of threads, so that the benchmark can show what a
/// durable `Write` costs on libdbus and SQLite alone, beside what prefsd adds to it.
///
/// prefsd answers calls on its connection's thread and commits on a writer thread of the
/// store's own, so that a slow disk never holds up a `Read`. This service does the same and
/// nothing else: its main thread polls the bus and hands each `Write` to a writer thread,
/// which commits it in SQLite as prefsd's store does (the same tables, statements and
/// pragmas: WAL, `synchronous = FULL`; in one transaction the key's previous value read, the
/// value upserted, one row added to the change journal; the WAL written full-size once, before
/// the first commit), then sends `Changed` and the reply.
/// No argument checks beyond the signature, no access control, no limits, no values held in
/// memory. `prefs-bench` compiles ``source(tables:statements:)`` with the SQL of prefsd's
/// store (`PreferencesStore`'s `StoreSQL`) when it runs (`pkg-config dbus-1 sqlite3`:
/// libdbus-1-dev, libsqlite3-dev) and times it beside prefsd with the GDBus reference client.
///
/// `store-floor-service ADDRESS NAME PATH INTERFACE DATABASE` connects to the bus at ADDRESS,
/// creates DATABASE, owns NAME (or exits 1 saying why), exports PATH, prints `ready` and
/// answers on INTERFACE:
/// - `Read(ss) → (v)`: ``FloorService/readAnswer`` whatever the domain and key (the main thread);
/// - `Write(ssv)` of a basic value (a string, a number, a boolean, …): committed by the writer
///   thread, then `Changed(s domain, a{sv} {key: value}, as [], as [])` and the empty reply;
///   `org.freedesktop.DBus.Error.IOError` with SQLite's message when the commit fails,
///   `org.freedesktop.DBus.Error.InvalidArgs` for a value of a container type;
/// - anything else on INTERFACE: `org.freedesktop.DBus.Error.UnknownMethod`.
///
/// A value is stored as its D-Bus type code and its bytes (a string's UTF-8, a number's
/// little-endian bytes). The service ends when its standard input ends or the bus
/// connection closes; its standard input must be a pipe the parent keeps open.
public enum StoreFloorService {
    /// The executable's name (and its source file's, with `.c`).
    public static let executableName = "store-floor-service"
    /// The name it owns on the benchmark's private bus, beside prefsd's and the floor's.
    public static let busName = "io.github.prefsd.BenchStoreFloor"
    /// The pkg-config packages it is compiled with.
    public static let libraries = "dbus-1 sqlite3"
    /// The Debian packages that provide them.
    public static let packages = "libdbus-1-dev and libsqlite3-dev"

    /// The SQL of a one-key write, in order, as prefsd's store runs it.
    public typealias Statements = (begin: String, previous: String, upsert: String, journal: String, commit: String)

    /// The command line after the executable.
    public static func arguments(address: String, path: String, interface: String, database: String) -> [String] {
        [address, busName, path, interface, database]
    }

    /// A C string literal of `text`: its quotes, backslashes and line breaks escaped.
    private static func literal(_ text: String) -> String {
        var escaped = "\""
        for character in text {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return escaped + "\""
    }

    /// The C source, creating `tables` (prefsd's store's preferences and journal, as SQLite
    /// keeps them) in WAL mode with `synchronous = FULL` and running `statements` for each
    /// write, as prefsd's store does.
    public static func source(tables: [String], statements: Statements) -> String {
        let schema = ["PRAGMA journal_mode = WAL", "PRAGMA synchronous = FULL"] + tables
        return FloorServiceCommon.source + """
            #include <sqlite3.h>

            static const char *schema[] = {\(schema.map(literal).joined(separator: ", "))};
            static const char *begin_sql = \(literal(statements.begin)), *previous_sql = \(literal(statements.previous)),
                *upsert_sql = \(literal(statements.upsert)), *journal_sql = \(literal(statements.journal)),
                *commit_sql = \(literal(statements.commit));
            static const long wal_bytes = \(FloorService.walBytes);

            """ + body
    }

    private static let body = #"""
        #include <fcntl.h>
        #include <poll.h>
        #include <pthread.h>
        #include <sys/stat.h>
        #include <time.h>
        #include <unistd.h>

        static DBusConnection *bus;
        static sqlite3 *db;
        static sqlite3_stmt *begin, *previous, *upsert, *journal, *commit;
        static long long sequence;

        /* The calls the main thread hands to the writer, in order. */
        static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
        static pthread_cond_t queued = PTHREAD_COND_INITIALIZER;
        enum { QUEUE = 4096 };
        static DBusMessage *queue[QUEUE];
        static unsigned long taken, added;

        /* The WAL written full-size with zeros, durably, as prefsd does after its first commit:
           commits then write over allocated blocks, and their fdatasync need not record a
           growing file. SQLite created the WAL with the tables. */
        static void preallocate_wal(const char *database) {
            char wal[4096];
            snprintf(wal, sizeof wal, "%s-wal", database);
            int fd = open(wal, O_WRONLY | O_CLOEXEC);
            struct stat info;
            if (fd < 0 || fstat(fd, &info) != 0) fail(wal, strerror(errno));
            static unsigned char zeros[64 << 10];
            for (off_t offset = info.st_size; offset < wal_bytes;) {
                size_t count = wal_bytes - offset < (off_t)sizeof zeros ? (size_t)(wal_bytes - offset) : sizeof zeros;
                ssize_t written = pwrite(fd, zeros, count, offset);
                if (written <= 0) fail(wal, strerror(errno));
                offset += written;
            }
            if (fdatasync(fd) != 0) fail(wal, strerror(errno));
            close(fd);
        }

        static sqlite3_stmt *prepare(const char *sql) {
            sqlite3_stmt *statement;
            if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &statement, NULL) != SQLITE_OK) fail(sql, sqlite3_errmsg(db));
            return statement;
        }

        /* Steps `statement` once, then resets it: SQLITE_DONE, SQLITE_ROW or an error. */
        static int run(sqlite3_stmt *statement) {
            int status = sqlite3_step(statement);
            sqlite3_reset(statement);
            return status;
        }

        /* The value of a variant as stored: its type code, then a string's bytes or a number's. */
        static int encode(DBusMessageIter *variant, unsigned char *bytes, int room, const char **text) {
            int type = dbus_message_iter_get_arg_type(variant);
            DBusBasicValue value;
            dbus_message_iter_get_basic(variant, &value);
            bytes[0] = (unsigned char)type;
            if (type == DBUS_TYPE_STRING || type == DBUS_TYPE_OBJECT_PATH || type == DBUS_TYPE_SIGNATURE) {
                *text = value.str;
                return 1;
            }
            int size = type == DBUS_TYPE_BYTE ? 1 : type == DBUS_TYPE_INT16 || type == DBUS_TYPE_UINT16 ? 2
                     : type == DBUS_TYPE_INT32 || type == DBUS_TYPE_UINT32 || type == DBUS_TYPE_BOOLEAN || type == DBUS_TYPE_UNIX_FD ? 4 : 8;
            if (size + 1 > room) return -1;
            memcpy(bytes + 1, &value, size);
            *text = NULL;
            return size + 1;
        }

        /* Commits Write(domain, key, value) as prefsd's store does; NULL when committed, else SQLite's message. */
        static const char *store(DBusMessage *call, const char *domain, const char *key, DBusMessageIter *variant) {
            unsigned char bytes[16];
            const char *text;
            int size = encode(variant, bytes, sizeof bytes, &text);
            unsigned char *value = bytes;
            if (text != NULL) {
                size = 1 + (int)strlen(text);
                value = malloc(size);
                if (value == NULL) return "out of memory";
                value[0] = bytes[0];
                memcpy(value + 1, text, size - 1);
            }
            struct timespec now;
            clock_gettime(CLOCK_REALTIME, &now);
            const char *failure = NULL;
            if (run(begin) != SQLITE_DONE) goto failed;
            sqlite3_bind_text(previous, 1, domain, -1, SQLITE_STATIC);
            sqlite3_bind_text(previous, 2, key, -1, SQLITE_STATIC);
            int found = sqlite3_step(previous);
            if (found != SQLITE_ROW && found != SQLITE_DONE) goto failed;
            int previous_bytes = found == SQLITE_ROW ? sqlite3_column_bytes(previous, 0) : 0;
            if (found == SQLITE_ROW) sqlite3_bind_blob(journal, 8, sqlite3_column_blob(previous, 0), previous_bytes, SQLITE_TRANSIENT);
            else sqlite3_bind_null(journal, 8);
            sqlite3_reset(previous);
            sqlite3_bind_text(upsert, 1, domain, -1, SQLITE_STATIC);
            sqlite3_bind_text(upsert, 2, key, -1, SQLITE_STATIC);
            sqlite3_bind_blob(upsert, 3, value, size, SQLITE_STATIC);
            if (run(upsert) != SQLITE_DONE) goto failed;
            const char *who = dbus_message_get_sender(call);
            sqlite3_bind_int64(journal, 1, ++sequence);
            sqlite3_bind_text(journal, 2, key, -1, SQLITE_STATIC);
            sqlite3_bind_int64(journal, 3, (long long)now.tv_sec * 1000000 + now.tv_nsec / 1000);
            sqlite3_bind_text(journal, 4, domain, -1, SQLITE_STATIC);
            sqlite3_bind_text(journal, 5, who ? who : "", -1, SQLITE_STATIC);
            sqlite3_bind_int(journal, 6, 1);
            sqlite3_bind_blob(journal, 7, value, size, SQLITE_STATIC);
            /* As prefsd counts a change's bytes against its journal's bound. */
            sqlite3_bind_int64(journal, 9, 48 + strlen(domain) + strlen(who ? who : "") + strlen(key) + size + previous_bytes + 16);
            if (run(journal) != SQLITE_DONE || run(commit) != SQLITE_DONE) goto failed;
            goto done;
        failed:
            failure = sqlite3_errmsg(db);
            if (!sqlite3_get_autocommit(db)) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        done:
            if (value != bytes) free(value);
            return failure;
        }

        /* The writer's answer to Write(ssv): commit, Changed(domain, {key: value}, [], []), the reply. */
        static DBusMessage *write_value(DBusMessage *call) {
            DBusMessageIter arguments, variant;
            const char *domain, *key;
            write_arguments(call, &domain, &key, &arguments);
            dbus_message_iter_recurse(&arguments, &variant);
            const char *failure = store(call, domain, key, &variant);
            if (failure != NULL) return dbus_message_new_error(call, DBUS_ERROR_IO_ERROR, failure);

            send_changed(bus, call);
            return dbus_message_new_method_return(call);
        }

        static void *writer(void *unused) {
            (void)unused;
            for (;;) {
                pthread_mutex_lock(&lock);
                while (taken == added) pthread_cond_wait(&queued, &lock);
                DBusMessage *call = queue[taken++ % QUEUE];
                pthread_mutex_unlock(&lock);
                DBusMessage *reply = write_value(call);
                if (reply == NULL || !dbus_connection_send(bus, reply, NULL)) fail("reply", "out of memory");
                /* Written now: the main thread polls for reading only. */
                dbus_connection_flush(bus);
                dbus_message_unref(reply);
                dbus_message_unref(call);
            }
            return NULL;
        }

        static int basic_variant(DBusMessage *call) {
            DBusMessageIter arguments, variant;
            const char *domain, *key;
            write_arguments(call, &domain, &key, &arguments);
            dbus_message_iter_recurse(&arguments, &variant);
            return dbus_type_is_basic(dbus_message_iter_get_arg_type(&variant));
        }

        static DBusHandlerResult handle(DBusConnection *connection, DBusMessage *call, void *unused) {
            (void)unused;
            if (dbus_message_get_type(call) != DBUS_MESSAGE_TYPE_METHOD_CALL || !dbus_message_has_interface(call, interface))
                return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
            DBusMessage *reply;
            if (dbus_message_has_member(call, "Write") && dbus_message_has_signature(call, "ssv")) {
                if (!basic_variant(call)) {
                    reply = dbus_message_new_error(call, DBUS_ERROR_INVALID_ARGS, "this service stores values of basic types only");
                } else {
                    pthread_mutex_lock(&lock);
                    int full = added - taken == QUEUE;
                    if (!full) queue[added++ % QUEUE] = dbus_message_ref(call);
                    pthread_mutex_unlock(&lock);
                    if (!full) {
                        pthread_cond_signal(&queued);
                        return DBUS_HANDLER_RESULT_HANDLED;
                    }
                    reply = dbus_message_new_error(call, DBUS_ERROR_LIMITS_EXCEEDED, "too many writes waiting");
                }
            } else if (dbus_message_has_member(call, "Read") && dbus_message_has_signature(call, "ss")) {
                reply = read_value(call);
            } else {
                reply = dbus_message_new_error(call, DBUS_ERROR_UNKNOWN_METHOD, "this service answers Read(ss) and Write(ssv) only");
            }
            if (reply == NULL || !dbus_connection_send(connection, reply, NULL)) fail("reply", "out of memory");
            dbus_message_unref(reply);
            return DBUS_HANDLER_RESULT_HANDLED;
        }

        int main(int argc, char **argv) {
            start(argc, argv, "store-floor-service", "DATABASE");
            if (sqlite3_open(argv[5], &db) != SQLITE_OK) fail(argv[5], sqlite3_errmsg(db));
            for (size_t i = 0; i < sizeof schema / sizeof *schema; i++) {
                char *error = NULL;
                if (sqlite3_exec(db, schema[i], NULL, NULL, &error) != SQLITE_OK) fail(argv[5], error);
            }
            preallocate_wal(argv[5]);
            begin = prepare(begin_sql);
            previous = prepare(previous_sql);
            upsert = prepare(upsert_sql);
            journal = prepare(journal_sql);
            commit = prepare(commit_sql);

            if (!dbus_threads_init_default()) fail("libdbus", "no threads");
            bus = join(argv[1], argv[2], handle);
            pthread_t thread;
            if (pthread_create(&thread, NULL, writer, NULL) != 0) fail("writer", strerror(errno));
            printf("ready\n");
            fflush(stdout);

            /* The main thread polls the bus and standard input itself, outside libdbus, so the
               writer can send while it waits; it reads and dispatches what has come. */
            int fd;
            if (!dbus_connection_get_unix_fd(bus, &fd)) fail("bus", "no file descriptor");
            for (;;) {
                while (dbus_connection_dispatch(bus) == DBUS_DISPATCH_DATA_REMAINS) {}
                struct pollfd polled[2] = {{.fd = fd, .events = POLLIN}, {.fd = 0, .events = POLLIN}};
                if (poll(polled, 2, -1) < 0 && errno != EINTR) fail("poll", strerror(errno));
                if (polled[1].revents) {
                    char scratch[256];
                    if (read(0, scratch, sizeof scratch) <= 0) break;
                }
                if (polled[0].revents && !dbus_connection_read_write(bus, 0)) break;
            }
            return 0;
        }
        """#
}
