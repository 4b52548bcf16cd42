/// Prometheus's rules for a label name, as a fleet file's labels must follow them: they become target labels
/// on `/metrics` and `/probe`, so a name Prometheus would refuse is refused when the file is read.
public enum LabelName {
    /// The names hostscope sets itself on every series of a host: `instance` is the host as named, `job` is
    /// Prometheus's own. A fleet file may not set them.
    public static let reserved: Set<String> = ["instance", "job"]

    /// Why `name` cannot be a label name, as the end of a sentence; `nil` when it can.
    ///
    /// A label name is `[a-zA-Z_][a-zA-Z0-9_]*`, and names starting with `__` are Prometheus's own.
    public static func problem(with name: String) -> String? {
        guard let first = name.unicodeScalars.first else { return "a label name cannot be empty" }
        guard isLetterOrUnderscore(first), name.unicodeScalars.allSatisfy({ isLetterOrUnderscore($0) || isDigit($0) })
        else {
            return "a label name is letters, digits and underscores and does not start with a digit "
                + "([a-zA-Z_][a-zA-Z0-9_]*), as Prometheus requires"
        }
        if name.hasPrefix("__") { return "names starting with __ are reserved for Prometheus's own labels" }
        if reserved.contains(name) {
            return "hostscope sets \(name) itself (instance is the host as named, job is Prometheus's)"
        }
        return nil
    }

    private static func isLetterOrUnderscore(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || scalar == "_"
    }

    private static func isDigit(_ scalar: Unicode.Scalar) -> Bool { ("0"..."9").contains(scalar) }
}
