import Dispatch
import Testing

@testable import PreferencesService

/// How long the dconf front lets native writes gather before it rewrites the mirror again.
@Suite("The dconf mirror's pause for native writes")
struct DconfFrontPauseTests {
    @Test("twenty times what the last rewrite took: about a twentieth of the time goes to rewriting for native writes")
    func pause() {
        #expect(DconfFront.nativePause(after: .nanoseconds(2_000_000)) == .nanoseconds(40_000_000))
        #expect(DconfFront.nativePause(after: .nanoseconds(50_000)) == .nanoseconds(1_000_000))
        #expect(DconfFront.nativePause(after: .nanoseconds(0)) == .nanoseconds(0))
        // An interval given in other units (never made by the front) means no pause.
        #expect(DconfFront.nativePause(after: .never) == .nanoseconds(0))
    }
}
