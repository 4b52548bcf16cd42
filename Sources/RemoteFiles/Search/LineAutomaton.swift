/// Decides whether a line holds a match of a ``LinePattern`` in time linear in the line's length,
/// whatever the pattern: a Thompson automaton run on all its states at once (no backtracking),
/// with the sets of states it meets turned into a cache of deterministic steps as it goes.
///
/// The cost per character is at most a walk over the program (bounded by ``maxProgramSize``),
/// and one table lookup once a step is cached; the cache holds at most ``maxStates`` sets and is
/// emptied when full, so memory stays bounded too.
///
/// Lines are read as UTF-8: a step consumes one scalar, and each byte that is not part of valid
/// UTF-8 is a character of its own that only `.` and negated sets match.
///
/// Not `Sendable`: the cache changes as lines are matched; one search uses one automaton.
final class LineAutomaton {
    /// The most instructions a pattern compiles to (its repeat counts expanded).
    static let maxProgramSize = 20_000
    /// The most cached state sets before the cache starts over.
    static let maxStates = 4_096
    /// The most cached steps on characters beyond ASCII before those start over.
    static let maxWideSteps = 65_536

    private enum Instruction {
        /// Consume one character in the set at this index of `sets`.
        case unit(Int)
        case split(Int, Int)
        case jump(Int)
        case assertion(LinePattern.Assertion)
        case match
    }

    private let program: [Instruction]
    private let sets: [UnitSet]
    /// Per set, the ASCII characters it holds, as a 128-bit map.
    private let asciiMaps: [(UInt64, UInt64)]
    private let ignoreCase: Bool
    /// Whether `\b` or `\B` appear: only then does a state remember whether it follows a word character.
    private let usesWordBoundaries: Bool

    /// What preceded the current position.
    private enum Before: UInt8 {
        case lineStart = 0, word, other
    }

    private struct StateKey: Hashable {
        var threads: [Int32]
        var before: UInt8
    }

    /// Transition table: per state, 128 ASCII slots and one for the end of the line.
    private static let slots = 129
    private static let unknown: Int32 = -1
    private static let matched: Int32 = -2
    private static let noMatch: Int32 = -3

    private var keys: [StateKey] = []
    private var index: [StateKey: Int32] = [:]
    private var table: [Int32] = []
    /// Steps on characters beyond ASCII, by state and character.
    private var wide: [UInt64: Int32] = [:]
    /// Scratch for the closure walk.
    private var visited: [UInt32]
    private var generation: UInt32 = 0
    private var stack: [Int] = []

    /// - Throws: ``LinePattern/ParseError`` when the program would exceed ``maxProgramSize``.
    init(_ pattern: LinePattern, ignoreCase: Bool) throws(LinePattern.ParseError) {
        var compiler = Compiler()
        try compiler.emit(pattern)
        compiler.program.append(.match)
        program = compiler.program
        sets = compiler.sets
        self.ignoreCase = ignoreCase
        usesWordBoundaries = compiler.usesWordBoundaries
        asciiMaps = compiler.sets.map { set in
            var low: UInt64 = 0
            var high: UInt64 = 0
            for value in 0..<UInt32(128) where set.contains(value, ignoringCase: ignoreCase) {
                if value < 64 { low |= 1 << UInt64(value) } else { high |= 1 << UInt64(value - 64) }
            }
            return (low, high)
        }
        visited = Array(repeating: 0, count: program.count)
    }

    /// Whether some part of `line` (without its newline) matches.
    func matches(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        var state = self.state(for: StateKey(threads: [], before: Before.lineStart.rawValue))
        var position = 0
        let count = line.count
        while position < count {
            // The hot loop: cached steps over ASCII, straight from the table.
            let (stopped, last, found) = table.withUnsafeBufferPointer { steps in
                var position = position
                var state = Int(state)
                while position < count {
                    let byte = line[position]
                    if byte >= 0x80 { break }
                    let next = steps[state &* Self.slots &+ Int(byte)]
                    if next < 0 { return (position, Int32(state), next) }
                    state = Int(next)
                    position &+= 1
                }
                return (position, Int32(state), Self.unknown)
            }
            position = stopped
            state = last
            if found == Self.matched { return true }
            guard position < count else { break }
            let byte = line[position]
            let next: Int32
            if byte < 0x80 {
                next = step(from: state, on: UInt32(byte), slot: Int(byte))
                position += 1
            } else {
                let (unit, length) = Self.decode(line, at: position)
                next = wide[Self.wideKey(state, unit)] ?? step(from: state, on: unit, slot: nil)
                position += length
            }
            if next == Self.matched { return true }
            state = next
        }
        var end = table[Int(state) * Self.slots + Self.slots - 1]
        if end == Self.unknown { end = step(from: state, on: nil, slot: Self.slots - 1) }
        return end == Self.matched
    }

    private static func wideKey(_ state: Int32, _ unit: UInt32) -> UInt64 {
        UInt64(UInt32(bitPattern: state)) << 32 | UInt64(unit)
    }

    /// One scalar (or one byte that is not UTF-8, as 0x110000 plus the byte) at `position`.
    private static func decode(_ bytes: UnsafeBufferPointer<UInt8>, at position: Int) -> (UInt32, Int) {
        let lead = bytes[position]
        let length: Int
        var value: UInt32
        switch lead {
        case 0xC2...0xDF:
            length = 2
            value = UInt32(lead & 0x1F)
        case 0xE0...0xEF:
            length = 3
            value = UInt32(lead & 0x0F)
        case 0xF0...0xF4:
            length = 4
            value = UInt32(lead & 0x07)
        default:
            return (0x110000 + UInt32(lead), 1)
        }
        guard position + length <= bytes.count else { return (0x110000 + UInt32(lead), 1) }
        for offset in 1..<length {
            let byte = bytes[position + offset]
            guard byte & 0xC0 == 0x80 else { return (0x110000 + UInt32(lead), 1) }
            value = value << 6 | UInt32(byte & 0x3F)
        }
        // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
        let smallest: UInt32 = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000
        guard value >= smallest, value <= 0x10FFFF, !(0xD800...0xDFFF).contains(value) else {
            return (0x110000 + UInt32(lead), 1)
        }
        return (value, length)
    }

    /// The state for `key`, made (and cached) when new.
    private func state(for key: StateKey) -> Int32 {
        if let found = index[key] { return found }
        if keys.count >= Self.maxStates {
            keys.removeAll(keepingCapacity: true)
            index.removeAll(keepingCapacity: true)
            table.removeAll(keepingCapacity: true)
            wide.removeAll(keepingCapacity: true)
        }
        let number = Int32(keys.count)
        keys.append(key)
        index[key] = number
        table.append(contentsOf: repeatElement(Self.unknown, count: Self.slots))
        return number
    }

    /// Follows `state` over `unit` (`nil`: the end of the line): the next state, or ``matched`` /
    /// ``noMatch``. Caches the step: in `slot` of the table for an ASCII character or the end,
    /// in ``wide`` for any other character.
    private func step(from state: Int32, on unit: UInt32?, slot: Int?) -> Int32 {
        let key = keys[Int(state)]
        let before = Before(rawValue: key.before) ?? .other
        let nextIsWord = unit.flatMap(Unicode.Scalar.init).map(UnitSet.isWord) ?? false
        // The closure of the state's threads plus a fresh start (the match may begin anywhere).
        generation &+= 1
        if generation == 0 {
            for position in visited.indices { visited[position] = 0 }
            generation = 1
        }
        stack.removeAll(keepingCapacity: true)
        stack.append(0)
        for thread in key.threads.reversed() { stack.append(Int(thread)) }
        var advanced: [Int32] = []
        var result: Int32?
        while let pc = stack.popLast() {
            if visited[pc] == generation { continue }
            visited[pc] = generation
            switch program[pc] {
            case .unit(let set):
                if let unit, accepts(set, unit) { advanced.append(Int32(pc + 1)) }
            case .split(let first, let second):
                stack.append(second)
                stack.append(first)
            case .jump(let target):
                stack.append(target)
            case .assertion(let assertion):
                if holds(assertion, before: before, atEnd: unit == nil, nextIsWord: nextIsWord) { stack.append(pc + 1) }
            case .match:
                result = Self.matched
            }
            if result != nil { break }
        }
        if result == nil {
            if unit == nil {
                result = Self.noMatch
            } else {
                advanced.sort()
                var unique: [Int32] = []
                unique.reserveCapacity(advanced.count)
                for thread in advanced where unique.last != thread { unique.append(thread) }
                let after: Before = usesWordBoundaries && nextIsWord ? .word : .other
                result = self.state(for: StateKey(threads: unique, before: after.rawValue))
            }
        }
        let next = result ?? Self.noMatch
        // The source state may have been dropped when the cache started over.
        guard Int(state) < keys.count, keys[Int(state)] == key else { return next }
        if let slot {
            table[Int(state) * Self.slots + slot] = next
        } else if let unit {
            if wide.count >= Self.maxWideSteps { wide.removeAll(keepingCapacity: true) }
            wide[Self.wideKey(state, unit)] = next
        }
        return next
    }

    private func accepts(_ set: Int, _ unit: UInt32) -> Bool {
        if unit < 128 {
            let map = asciiMaps[set]
            return unit < 64 ? map.0 & (1 << UInt64(unit)) != 0 : map.1 & (1 << UInt64(unit - 64)) != 0
        }
        return sets[set].contains(unit, ignoringCase: ignoreCase)
    }

    private func holds(_ assertion: LinePattern.Assertion, before: Before, atEnd: Bool, nextIsWord: Bool) -> Bool {
        switch assertion {
        case .lineStart: return before == .lineStart
        case .lineEnd: return atEnd
        case .wordBoundary: return (before == .word) != nextIsWord
        case .notWordBoundary: return (before == .word) == nextIsWord
        }
    }

    /// Turns a pattern into instructions, counting them against ``maxProgramSize``.
    private struct Compiler {
        var program: [Instruction] = []
        var sets: [UnitSet] = []
        var usesWordBoundaries = false

        mutating func emit(_ pattern: LinePattern) throws(LinePattern.ParseError) {
            guard program.count < LineAutomaton.maxProgramSize else {
                throw LinePattern.ParseError(
                    reason: "with its repeat counts written out it has over \(LineAutomaton.maxProgramSize) steps",
                    kind: .tooLarge)
            }
            switch pattern {
            case .empty:
                break
            case .unit(let set):
                if let existing = sets.firstIndex(of: set) {
                    program.append(.unit(existing))
                } else {
                    sets.append(set)
                    program.append(.unit(sets.count - 1))
                }
            case .assertion(let assertion):
                if assertion == .wordBoundary || assertion == .notWordBoundary { usesWordBoundaries = true }
                program.append(.assertion(assertion))
            case .concatenation(let items):
                for item in items { try emit(item) }
            case .alternation(let branches):
                // split L1, next; L1: branch; jump end; next: split L2, … ; last branch
                var jumps: [Int] = []
                for (number, branch) in branches.enumerated() {
                    if number < branches.count - 1 {
                        let split = program.count
                        program.append(.split(split + 1, 0))
                        try emit(branch)
                        jumps.append(program.count)
                        program.append(.jump(0))
                        program[split] = .split(split + 1, program.count)
                    } else {
                        try emit(branch)
                    }
                }
                for jump in jumps { program[jump] = .jump(program.count) }
            case .repetition(let body, let minimum, let maximum):
                for _ in 0..<minimum { try emit(body) }
                if let maximum {
                    var splits: [Int] = []
                    for _ in minimum..<maximum {
                        splits.append(program.count)
                        program.append(.split(0, 0))
                        try emit(body)
                    }
                    for split in splits { program[split] = .split(split + 1, program.count) }
                } else {
                    let loop = program.count
                    program.append(.split(loop + 1, 0))
                    try emit(body)
                    program.append(.jump(loop))
                    program[loop] = .split(loop + 1, program.count)
                }
            }
        }
    }
}
