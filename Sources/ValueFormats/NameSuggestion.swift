/// "Did you mean …?" for a misspelt name: the closest of the names a command knows.
public enum NameSuggestion {
    /// The candidate closest to `name` by edit distance (insertions, deletions, substitutions and swaps of
    /// neighbouring characters, case ignored), if it is close enough to be a misspelling: at most one edit in
    /// a name of up to four characters, two up to eight, three beyond. Ties go to the earlier candidate.
    public static func closest(to name: String, among candidates: [String]) -> String? {
        let typed = Array(name.lowercased())
        guard !typed.isEmpty else { return nil }
        let allowed = typed.count <= 4 ? 1 : typed.count <= 8 ? 2 : 3
        var best: (name: String, distance: Int)?
        for candidate in candidates where candidate != name {
            let distance = editDistance(typed, Array(candidate.lowercased()))
            guard distance <= allowed else { continue }
            if best == nil || distance < best!.distance { best = (candidate, distance) }
        }
        return best?.name
    }

    /// The optimal string alignment distance of `a` and `b`.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previous2[j - 2] + 1)
                }
            }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count]
    }
}
