import Foundation
import PreferencesModel
import PreferencesProxy
import PrefsdTestSupport
import Testing

@Suite("GSettings backend: the first read of a schema waits for one round trip", .serialized)
struct GSettingsFirstReadTests {
    /// A relay between a GSettings program and the bus (`unix:path=` `argv[1]` to `argv[2]`)
    /// that holds back everything the bus says to the program from the program's first
    /// `AddMatch` on, until the program has sent a call naming `ReadDomain`. A backend that
    /// waits for the answer of its subscription before it reads never gets it: its first
    /// read gives up at its bound and answers the schema default.
    static let relay = """
        import socket, sys, threading
        listen_path, bus_path = sys.argv[1], sys.argv[2]
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(listen_path)
        server.listen(16)
        print('listening', flush=True)

        def serve(client):
            bus = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            bus.connect(bus_path)
            lock = threading.Lock()
            state = {'sent': b'', 'holding': False, 'released': False, 'held': []}
            def upstream(data):
                state['sent'] += data
                if not state['holding'] and b'AddMatch' in state['sent']:
                    state['holding'] = True
                    print('holding the answers', flush=True)
                if state['holding'] and not state['released'] and b'ReadDomain' in state['sent']:
                    state['released'] = True
                    held = b''.join(state['held'])
                    client.sendall(held)
                    print('ReadDomain sent with %d bytes of answers held back' % len(held), flush=True)
                bus.sendall(data)
            def downstream(data):
                if state['holding'] and not state['released']:
                    state['held'].append(data)
                else:
                    client.sendall(data)
            def pump(source, target, handle):
                while True:
                    data = source.recv(65536)
                    if not data:
                        target.shutdown(socket.SHUT_WR)
                        return
                    with lock:
                        handle(data)
            threading.Thread(target=pump, args=(client, bus, upstream), daemon=True).start()
            threading.Thread(target=pump, args=(bus, client, downstream), daemon=True).start()

        while True:
            connection, _ = server.accept()
            serve(connection)
        """

    @Test("the backend sends ReadDomain before the bus has answered its subscription, and reads the stored value")
    func readGoesOutWithTheSubscription() async throws {
        let service = try await ServiceFixture()
        let proxy = PreferencesProxy(connection: try service.connect())
        defer { proxy.close() }
        try await proxy.write("org.example.Test", "text", .string("stored"))

        let busPath = service.bus.socketPath
        let relaySocket = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-relay-\(UUID().uuidString)").path
        defer { unlink(relaySocket) }
        let fixture = try GSettingsFixture(busAddress: "unix:path=\(relaySocket)")
        let (relay, relayOutput) = try await fixture.startListener(Self.relay, [relaySocket, busPath])
        defer {
            kill(relay.processIdentifier, SIGKILL)
            _ = waitForExit(of: relay)
        }

        let read = try fixture.gsettings("get", GSettingsFixture.schema, "text")
        let said = (try? String(contentsOf: relayOutput, encoding: .utf8)) ?? ""
        #expect(said.contains("holding the answers"), "the backend sent no AddMatch through the relay: \(said)")
        #expect(said.contains("ReadDomain sent with"), "the backend waited for its subscription's answers before reading: \(said)")
        #expect(read.status == 0 && read.stdout == "'stored'\n", "gsettings get: \(read.stdout) \(read.stderr)")
    }
}
