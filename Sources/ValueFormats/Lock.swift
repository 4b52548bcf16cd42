#if HOSTSCOPE_TSAN
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// The lock every module puts its shared mutable state behind, in a build for ThreadSanitizer: the
    /// same API as `Synchronization.Mutex` over a `pthread_mutex_t`, whose lock and unlock ThreadSanitizer
    /// intercepts, so that it sees the order of two critical sections.
    ///
    /// `Mutex` on Linux is a futex lock: its contended path runs in the (uninstrumented) standard library
    /// and the kernel, so ThreadSanitizer sees no ordering between one thread's unlock and another's lock,
    /// and reports every pair of accesses under the lock as a data race. `Scripts/sanitize.sh` builds with
    /// `-DHOSTSCOPE_TSAN` to get this type; any other build gets `Mutex` itself (below).
    // @unchecked Sendable: the value is reached only through `withLock` (or between `_unsafeLock` and
    // `_unsafeUnlock`), with `mutex` held, exactly as `Mutex` is `Sendable`.
    public final class Lock<Value: ~Copyable>: @unchecked Sendable {
        private let mutex: UnsafeMutablePointer<pthread_mutex_t>
        private let value: UnsafeMutablePointer<Value>

        /// A lock around `initialValue`.
        public init(_ initialValue: consuming sending Value) {
            mutex = .allocate(capacity: 1)
            mutex.initialize(to: pthread_mutex_t())
            pthread_mutex_init(mutex, nil)
            value = .allocate(capacity: 1)
            value.initialize(to: initialValue)
        }

        deinit {
            value.deinitialize(count: 1)
            value.deallocate()
            pthread_mutex_destroy(mutex)
            mutex.deallocate()
        }

        /// Runs `body` on the value with the lock held.
        public func withLock<Result: ~Copyable, E: Error>(
            _ body: (inout sending Value) throws(E) -> sending Result
        ) throws(E) -> sending Result {
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }

        /// Runs `body` on the value if the lock is free at once; `nil` when another thread holds it.
        public func withLockIfAvailable<Result: ~Copyable, E: Error>(
            _ body: (inout sending Value) throws(E) -> sending Result
        ) throws(E) -> sending Result? {
            guard pthread_mutex_trylock(mutex) == 0 else { return nil }
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }
    }

    extension Lock where Value == Void {
        /// Takes the lock; `_unsafeUnlock()` on the same thread must follow (as `Mutex<Void>._unsafeLock`).
        public func _unsafeLock() {
            pthread_mutex_lock(mutex)
        }

        /// Releases the lock taken by `_unsafeLock()`.
        public func _unsafeUnlock() {
            pthread_mutex_unlock(mutex)
        }
    }
#else
    public import Synchronization

    /// The lock every module puts its shared mutable state behind: `Synchronization.Mutex` itself (a
    /// futex lock on Linux), so that a production build is exactly as fast as with `Mutex`.
    ///
    /// A build for ThreadSanitizer (`-DHOSTSCOPE_TSAN`, which `Scripts/sanitize.sh` passes) gets a lock
    /// of the same API over a `pthread_mutex_t` instead, which ThreadSanitizer sees. A file that uses
    /// the lock imports `Synchronization` too, where `Mutex`'s methods live.
    public typealias Lock<Value: ~Copyable> = Mutex<Value>
#endif
