/// Times in tables: RFC 3339's fields in UTC with a space between date and time and no zone letter, under a
/// column headed `(UTC)`: `2026-11-21 19:22:00.123`.
enum TimeText {
    /// The table form of an RFC 3339 UTC timestamp (`2026-11-21T19:22:00.123Z`).
    static func utc(_ stamp: String) -> String {
        String(stamp.dropLast(stamp.hasSuffix("Z") ? 1 : 0).map { $0 == "T" ? " " : $0 })
    }
}
