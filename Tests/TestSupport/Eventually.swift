import Foundation

/// Waits, polling in real time, until `condition` holds: what a test uses instead of sleeping a fixed time
/// and then asserting, so that a busy machine makes it slower, never wrong. A condition still false at
/// `timeout` throws (the test fails, naming `what`) rather than hangs.
/// `every` is the pause between two looks (longer for a condition that costs a request or a query).
public func waitUntil(
    timeout: Duration = .seconds(30), every: Duration = .milliseconds(5),
    _ what: @autoclosure () -> String = "a condition", _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while !(try await condition()) {
        guard ContinuousClock.now < deadline else { throw WaitTimeout(what: what(), timeout: timeout) }
        try await Task.sleep(for: every)
    }
}

/// ``waitUntil(timeout:every:_:_:)`` for a test that is not `async`: the thread sleeps between two looks.
public func waitUntilBlocking(
    timeout: Duration = .seconds(30), every: Duration = .milliseconds(100),
    _ what: @autoclosure () -> String = "a condition", _ condition: () throws -> Bool
) throws {
    let deadline = ContinuousClock.now + timeout
    while !(try condition()) {
        guard ContinuousClock.now < deadline else { throw WaitTimeout(what: what(), timeout: timeout) }
        Thread.sleep(forTimeInterval: every / .seconds(1))
    }
}

/// A condition that did not come true in time.
public struct WaitTimeout: Error, CustomStringConvertible {
    /// What the test waited for.
    public var what: String
    /// How long it waited.
    public var timeout: Duration

    public var description: String { "gave up waiting \(timeout) for \(what)" }
}
