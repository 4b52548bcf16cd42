/// A parser's figures with what the reader should know about them: a tool version read by the
/// closest known layout, a figure that is since boot rather than current, a unit inferred.
public struct Parsed<Value: Sendable>: Sendable {
    public var value: Value
    public var warnings: [String]

    public init(_ value: Value, warnings: [String] = []) {
        self.value = value
        self.warnings = warnings
    }
}

extension Parsed: Equatable where Value: Equatable {}
