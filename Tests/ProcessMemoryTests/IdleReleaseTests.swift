import Dispatch
import Synchronization
import Testing

@testable import ProcessMemory

@Suite("Giving back memory each time calls stop")
struct IdleReleaseTests {
    /// Waits (at most 20 s) until `release` has made `count` releases.
    private func waitForReleases(_ release: IdleRelease, _ count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while release.releases < count, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(release.releases == count, "\(release.releases) releases, expected \(count)")
    }

    @Test("the first release follows the start; each call after a release brings the next one once calls stop")
    func releasesAfterStartAndAfterCalls() async throws {
        let made = Mutex(0)
        let release = IdleRelease(delay: .milliseconds(20)) { made.withLock { $0 += 1 } }
        release.start(after: .milliseconds(20))
        try await waitForReleases(release, 1)
        for _ in 0..<3 {
            let before = release.releases
            for _ in 0..<5 { release.callCame() }
            try await waitForReleases(release, before + 1)
        }
        #expect(made.withLock { $0 } == release.releases, "each release ran the release given")
    }
}
