import Dispatch
import Synchronization
import Testing
import ValueFormats

/// `Lock` is `Synchronization.Mutex` in an ordinary build and a `pthread_mutex_t` in a ThreadSanitizer
/// build (`Scripts/sanitize.sh thread`): the same tests run against whichever the build has.
@Suite struct LockTests {
    @Test func incrementsFromManyThreadsAreNeverLost() {
        let counter = Lock(0)
        let threads = 4
        let increments = 20_000
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<increments {
                counter.withLock { value in
                    // A read and a write apart, so that two threads inside at once would lose updates.
                    let read = value
                    value = read + 1
                }
            }
        }
        #expect(counter.withLock { $0 } == threads * increments)
    }

    @Test func aLockHeldByOneThreadIsNotAvailableToAnother() {
        let lock = Lock([1, 2, 3])
        let seenWhileHeld = Lock<Int?>(0)
        lock.withLock { _ in
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global().async {
                seenWhileHeld.withLock { $0 = lock.withLockIfAvailable { $0.count } }
                done.signal()
            }
            done.wait()
        }
        #expect(seenWhileHeld.withLock { $0 } == nil)
        #expect(lock.withLockIfAvailable { $0.count } == 3)
    }

    @Test func theUnsafeLockOfAVoidLockExcludesOtherThreads() {
        let lock = Lock<Void>(())
        let seenWhileHeld = Lock<Bool?>(nil)
        lock._unsafeLock()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            seenWhileHeld.withLock { $0 = lock.withLockIfAvailable { _ in true } ?? false }
            done.signal()
        }
        done.wait()
        lock._unsafeUnlock()
        #expect(seenWhileHeld.withLock { $0 } == false)
        #expect(lock.withLockIfAvailable { _ in true } == true)
    }

    @Test func theGuardedValueIsReleasedWithTheLock() {
        final class Flag: Sendable {
            let raised = Lock(false)
        }
        final class Tracked: Sendable {
            let flag: Flag
            init(_ flag: Flag) { self.flag = flag }
            deinit { flag.raised.withLock { $0 = true } }
        }
        let released = Flag()
        do {
            let lock = Lock(Tracked(released))
            #expect(lock.withLock { $0.flag.raised.withLock { $0 } } == false)
        }
        #expect(released.raised.withLock { $0 })
    }
}
