/// A span's attributes in the order they were first set: the first four inside the span object, the
/// rest in an array.
///
/// Most spans carry a handful of attributes; keeping them inline spares each span an array
/// allocation, and the cache misses of freeing it when the ring overwrites the span.
struct SpanAttributeList {
    private static let inlineCapacity = 4

    private var inline = InlineArray<4, Attribute?>(repeating: nil)
    private var overflow: [Attribute] = []
    /// Attributes held.
    private(set) var count = 0

    init() {}

    init(_ attributes: [Attribute]) {
        for attribute in attributes { append(attribute) }
    }

    /// The position of the attribute with this key.
    @inline(__always)
    func index(of key: String) -> Int? {
        let length = key.utf8.count
        for index in 0..<min(count, Self.inlineCapacity) {
            // Comparing lengths first settles most mismatches without a string comparison.
            let existing = inline[index].unsafelyUnwrapped.key
            if existing.utf8.count == length, existing == key { return index }
        }
        guard count > Self.inlineCapacity else { return nil }
        return overflow.firstIndex { $0.key.utf8.count == length && $0.key == key }.map { $0 + Self.inlineCapacity }
    }

    /// Replaces the value of the attribute at `index`.
    @inline(__always)
    mutating func setValue(_ value: AttributeValue, at index: Int) {
        if index < Self.inlineCapacity {
            inline[index]!.value = value
        } else {
            overflow[index - Self.inlineCapacity].value = value
        }
    }

    @inline(__always)
    mutating func append(_ attribute: consuming Attribute) {
        if count < Self.inlineCapacity {
            inline[count] = attribute
        } else {
            overflow.append(attribute)
        }
        count += 1
    }

    /// The attribute at `index`.
    subscript(index: Int) -> Attribute {
        index < Self.inlineCapacity ? inline[index].unsafelyUnwrapped : overflow[index - Self.inlineCapacity]
    }

    /// Calls `body` with each attribute, in order.
    func forEach(_ body: (Attribute) -> Void) {
        for index in 0..<count { body(self[index]) }
    }

    /// Removes the attributes `shouldRemove` selects; the others keep their order.
    mutating func removeAll(where shouldRemove: (Attribute) -> Bool) {
        var kept = SpanAttributeList()
        forEach { if !shouldRemove($0) { kept.append($0) } }
        self = kept
    }

    /// The attributes as an array, in order.
    var array: [Attribute] {
        var result: [Attribute] = []
        result.reserveCapacity(count)
        for index in 0..<min(count, Self.inlineCapacity) { result.append(inline[index].unsafelyUnwrapped) }
        result.append(contentsOf: overflow)
        return result
    }
}
