import Synchronization
public import Tracing
import ValueFormats

/// A live span of ``RingBufferTracer``; once ended, the ring holds the span object itself and builds its
/// ``FinishedSpan`` only when a reader asks.
///
/// All mutable state sits behind one lock, so a span may be shared between tasks, and every change
/// (an edit through ``attributes`` included) takes the lock once. Values are redacted and bounded
/// before the lock is taken, except those set through ``attributes``, which are redacted before
/// anything reads them. After `end()` every mutation is ignored, so an ended span never changes again.
// @unchecked: `state` is read and written only while `lock` is held (`withState`, and the `_modify` of
// `attributes`, which holds it across its `yield`, something `Lock.withLock` cannot express).
public final class RecordingSpan: Tracing.Span, @unchecked Sendable {
    /// This span's ids and flags.
    public let spanContext: SpanContext
    /// The parent span's id, `nil` for a root span.
    public let parentSpanID: SpanID?
    /// Client, server, internal, producer or consumer.
    public let kind: FinishedSpan.Kind
    /// Start, in nanoseconds since the Unix epoch.
    public let startNanoseconds: UInt64

    /// The context the span started in. ``context`` adds this span to it on demand: most spans never
    /// start a child, and writing a `ServiceContext` costs a dictionary and a boxed value.
    private let parentContext: ServiceContext
    /// What the span needs of its tracer (``TracerCore``).
    private let core: TracerCore
    private let lock = Lock<Void>(())
    /// Guarded by `lock`; the lock already makes every access exclusive.
    @exclusivity(unchecked) private var state: State

    private struct State {
        var name: String
        var attributes = SpanAttributeList()
        var events: [FinishedSpan.Event] = []
        var links: [FinishedSpan.Link] = []
        var status = FinishedSpan.Status()
        var droppedAttributes = 0
        var droppedEvents = 0
        var droppedLinks = 0
        /// Set once, by `end`; a span with an end is finished and immutable.
        var endNanoseconds: UInt64?
        /// The attributes as the `SpanAttributes` last handed out through ``attributes``, kept until the
        /// span ends or ``setAttribute(_:_:)`` changes them, so that `span.attributes["k"] = v` edits it in
        /// place instead of building the whole set twice.
        var attributeView: SpanAttributes?
        /// The view holds edits made through ``attributes`` that `attributes` does not have yet: they are
        /// merged (redacted, bounded, ordered) before anything reads the attributes, and when the span ends.
        var viewIsAhead = false
    }

    init(
        name: String, parentContext: ServiceContext, spanContext: SpanContext, parentSpanID: SpanID?,
        kind: FinishedSpan.Kind, startNanoseconds: UInt64, core: TracerCore
    ) {
        self.parentContext = parentContext
        self.spanContext = spanContext
        self.parentSpanID = parentSpanID
        self.kind = kind
        self.startNanoseconds = startNanoseconds
        self.core = core
        state = State(name: name)
    }

    /// Runs `body` on the state with the lock held.
    @inline(__always)
    private func withState<Result>(_ body: (inout State) -> Result) -> Result {
        lock._unsafeLock()
        defer { lock._unsafeUnlock() }
        return body(&state)
    }

    /// The context to start children in: the parent's context plus this span's ``SpanContext``.
    public var context: ServiceContext {
        var context = parentContext
        context.spanContext = spanContext
        return context
    }

    public var traceID: TraceID { spanContext.traceID }
    public var spanID: SpanID { spanContext.spanID }

    public var isRecording: Bool { withState { $0.endNanoseconds == nil } }

    public var operationName: String {
        get { withState { $0.name } }
        set {
            let name = core.sanitize(newValue)
            withState { state in
                guard state.endNanoseconds == nil else { return }
                state.name = name
            }
        }
    }

    // MARK: Attributes

    /// Sets one attribute (redacted and bounded first); an existing key keeps its position.
    public func setAttribute(_ key: String, _ value: AttributeValue) {
        let value = core.sanitize(key: key, value: value)
        let maximum = core.limits.maximumAttributes
        withState { state in
            guard state.endNanoseconds == nil else { return }
            if state.viewIsAhead { merge(&state) }
            if state.attributeView != nil { state.attributeView = nil }
            if let index = state.attributes.index(of: key) {
                state.attributes.setValue(value, at: index)
            } else if state.attributes.count < maximum {
                state.attributes.append(Attribute(key, value))
            } else {
                state.droppedAttributes += 1
            }
        }
    }

    /// Sets a string attribute.
    public func setAttribute(_ key: String, _ value: String) { setAttribute(key, .string(value)) }
    /// Sets an integer attribute.
    public func setAttribute(_ key: String, _ value: Int) { setAttribute(key, .int(Int64(value))) }
    /// Sets an integer attribute.
    public func setAttribute(_ key: String, _ value: Int64) { setAttribute(key, .int(value)) }
    /// Sets a floating-point attribute.
    public func setAttribute(_ key: String, _ value: Double) { setAttribute(key, .double(value)) }
    /// Sets a boolean attribute.
    public func setAttribute(_ key: String, _ value: Bool) { setAttribute(key, .bool(value)) }
    /// Sets a string-array attribute (`process.command_args`).
    public func setAttribute(_ key: String, _ value: [String]) { setAttribute(key, .stringArray(value)) }

    /// The attributes set so far, in the order they were first set.
    public var orderedAttributes: [Attribute] {
        withState { state in
            if state.viewIsAhead { merge(&state) }
            return state.attributes.array
        }
    }

    /// The attributes as swift-distributed-tracing's unordered `SpanAttributes`.
    ///
    /// Setting replaces the whole set: keys already present keep their position, new keys are
    /// appended in key order (a dictionary has none of its own), absent keys are removed. Values are
    /// redacted and bounded like ``setAttribute(_:_:)``'s, and only values that changed are looked at
    /// again. `span.attributes["k"] = v` edits the span's own copy of the set in place, and the edits
    /// are merged when the attributes are next read (here or through ``orderedAttributes``), when
    /// ``setAttribute(_:_:)`` is called, or when the span ends; so keys added that way between two reads
    /// also come in key order.
    public var attributes: SpanAttributes {
        get {
            withState { state in
                if state.viewIsAhead { merge(&state) }
                if let view = state.attributeView { return view }
                let view = Self.view(of: state.attributes)
                if state.endNanoseconds == nil { state.attributeView = view }
                return view
            }
        }
        set {
            withState { state in
                state.attributeView = nil
                state.viewIsAhead = false
                merge(newValue, into: &state)
            }
        }
        _modify {
            // The lock is held across the caller's edit, so that edits from many tasks apply one after
            // another and none is lost. The edit must not touch this span: the lock is not reentrant.
            lock._unsafeLock()
            defer { lock._unsafeUnlock() }
            if state.endNanoseconds == nil {
                if state.attributeView == nil { state.attributeView = Self.view(of: state.attributes) }
                // Merged when the attributes are next read or the span ends: a run of
                // `span.attributes[k] = v` costs a dictionary update each, not a merge each.
                state.viewIsAhead = true
                yield &state.attributeView!
            } else {
                // An ended span never changes: the edit goes to a copy that is thrown away.
                var discarded = Self.view(of: state.attributes)
                yield &discarded
            }
        }
    }

    /// Applies `update` to ``attributes`` with the span's lock held once for the whole update, so that
    /// updates from many tasks never lose an edit. `update` must not touch this span.
    public func updateAttributes(_ update: (inout SpanAttributes) -> Void) {
        update(&attributes)
    }

    private static func view(of attributes: SpanAttributeList) -> SpanAttributes {
        // Room for a few more, so that adding them one by one does not grow the table each time.
        var view = [String: SpanAttribute](minimumCapacity: attributes.count + 8)
        attributes.forEach { view[$0.key] = $0.value.spanAttribute }
        return SpanAttributes(view)
    }

    /// Merges the edits waiting in the view.
    private func merge(_ state: inout State) {
        state.viewIsAhead = false
        guard let view = state.attributeView.take() else { return }
        merge(view, into: &state)
    }

    /// Makes the stored attributes those of `incoming` (see ``attributes``) and keeps the result as the
    /// span's view of them.
    private func merge(_ incoming: SpanAttributes, into state: inout State) {
        guard state.endNanoseconds == nil else { return }
        var view = incoming
        var removed = false
        for index in 0..<state.attributes.count {
            let stored = state.attributes[index]
            guard let attribute = view.get(stored.key), let value = AttributeValue(attribute) else {
                view.set(stored.key, value: nil)
                removed = true
                continue
            }
            guard value != stored.value else { continue }
            let sanitized = core.sanitize(key: stored.key, value: value)
            state.attributes.setValue(sanitized, at: index)
            if sanitized != value { view.set(stored.key, value: sanitized.spanAttribute) }
        }
        if removed {
            state.attributes.removeAll { view.get($0.key) == nil }
        }
        if view.count > state.attributes.count {
            // New keys, in key order; `nil` for kinds hostscope cannot store.
            var added: [(key: String, value: AttributeValue?)] = []
            added.reserveCapacity(view.count - state.attributes.count)
            view.forEach { key, attribute in
                if state.attributes.index(of: key) == nil { added.append((key, AttributeValue(attribute))) }
            }
            if added.count > 1 { added.sort { $0.key < $1.key } }
            let maximum = core.limits.maximumAttributes
            for (key, value) in added {
                guard let value, state.attributes.count < maximum else {
                    if value != nil { state.droppedAttributes += 1 }
                    view.set(key, value: nil)
                    continue
                }
                let sanitized = core.sanitize(key: key, value: value)
                state.attributes.append(Attribute(key, sanitized))
                if sanitized != value { view.set(key, value: sanitized.spanAttribute) }
            }
        }
        state.attributeView = view
    }

    // MARK: Events, links, status

    /// Adds an event stamped by the tracer's clock.
    public func addEvent(_ name: String, attributes: [Attribute] = []) {
        appendEvent(name: name, time: core.clock.nanosecondsSinceEpoch(), attributes: attributes)
    }

    /// Adds an event at its own instant (a `SpanEvent` is stamped when it is created).
    public func addEvent(_ event: SpanEvent) {
        var attributes: [Attribute] = []
        event.attributes.forEach { key, value in
            if let value = AttributeValue(value) { attributes.append(Attribute(key, value)) }
        }
        attributes.sort { $0.key < $1.key }
        appendEvent(name: event.name, time: event.nanosecondsSinceEpoch, attributes: attributes)
    }

    /// Records an error as an OpenTelemetry `exception` event; the status is left to the caller.
    public func recordError<Instant: TracerInstant>(
        _ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant
    ) {
        var eventAttributes = [
            Attribute("exception.type", .string(String(reflecting: type(of: error)))),
            Attribute("exception.message", .string(String(describing: error))),
        ]
        var extra: [Attribute] = []
        attributes.forEach { key, value in
            if let value = AttributeValue(value) { extra.append(Attribute(key, value)) }
        }
        eventAttributes += extra.sorted { $0.key < $1.key }
        appendEvent(name: "exception", time: core.nanoseconds(instant), attributes: eventAttributes)
    }

    private func appendEvent(name: String, time: UInt64, attributes: [Attribute]) {
        let name = core.sanitize(name)
        let (kept, dropped) = core.sanitize(attributes)
        let event = FinishedSpan.Event(
            name: name, timeNanoseconds: time, attributes: kept, droppedAttributeCount: dropped)
        let maximum = core.limits.maximumEvents
        withState { state in
            guard state.endNanoseconds == nil else { return }
            if state.events.count < maximum {
                state.events.append(event)
            } else {
                state.droppedEvents += 1
            }
        }
    }

    /// Links this span to another span.
    public func addLink(to target: SpanContext, attributes: [Attribute] = []) {
        let (kept, dropped) = core.sanitize(attributes)
        let link = FinishedSpan.Link(
            traceID: target.traceID, spanID: target.spanID, traceState: target.traceState, attributes: kept,
            droppedAttributeCount: dropped)
        let maximum = core.limits.maximumLinks
        withState { state in
            guard state.endNanoseconds == nil else { return }
            if state.links.count < maximum {
                state.links.append(link)
            } else {
                state.droppedLinks += 1
            }
        }
    }

    /// Links to the span whose context the link carries; a context without one is ignored.
    public func addLink(_ link: SpanLink) {
        guard let target = link.context.spanContext else { return }
        var attributes: [Attribute] = []
        link.attributes.forEach { key, value in
            if let value = AttributeValue(value) { attributes.append(Attribute(key, value)) }
        }
        addLink(to: target, attributes: attributes.sorted { $0.key < $1.key })
    }

    /// Sets the status with OpenTelemetry's precedence: `ok` is final, and a message is kept only
    /// with `error`. An error without a message keeps the message of an earlier error (`withSpan` sets
    /// a bare error status when its body throws, after the body may have set a precise one).
    public func setStatus(_ code: FinishedSpan.Status.Code, message: String? = nil) {
        let message = code == .error ? message.map { core.sanitize($0) } : nil
        withState { state in
            guard state.endNanoseconds == nil, state.status.code != .ok, code != .unset else { return }
            if code == .error, message == nil, state.status.code == .error { return }
            state.status = FinishedSpan.Status(code: code, message: message)
        }
    }

    public func setStatus(_ status: SpanStatus) {
        setStatus(status.code == .ok ? .ok : .error, message: status.message)
    }

    // MARK: Ending

    /// Ends the span at the tracer clock's now (or at an explicit ``TraceInstant``) and stores it.
    /// Later calls do nothing.
    public func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
        let end = core.nanoseconds(instant)
        let ended = withState { state in
            guard state.endNanoseconds == nil else { return false }
            if state.viewIsAhead { merge(&state) }
            state.endNanoseconds = end
            state.attributeView = nil  // Held spans keep only their ordered attributes.
            return true
        }
        if ended { core.record(self) }
    }

    /// The end, in nanoseconds since the Unix epoch; `nil` while the span is recording.
    var endNanoseconds: UInt64? { withState { $0.endNanoseconds } }

    /// The span as readers, exporters and sinks see it (a running span ends at its start).
    func finished() -> FinishedSpan {
        withState { state in
            if state.viewIsAhead { merge(&state) }  // A running span's pending edits, redacted first.
            return FinishedSpan(
                traceID: spanContext.traceID, spanID: spanContext.spanID, parentSpanID: parentSpanID,
                traceState: spanContext.traceState, name: state.name, kind: kind, startNanoseconds: startNanoseconds,
                endNanoseconds: state.endNanoseconds ?? startNanoseconds, status: state.status,
                attributes: state.attributes.array, events: state.events, links: state.links, resource: core.resource,
                droppedAttributeCount: state.droppedAttributes, droppedEventCount: state.droppedEvents,
                droppedLinkCount: state.droppedLinks)
        }
    }
}

extension AttributeValue {
    /// The value of a swift-distributed-tracing attribute; `nil` for kinds hostscope cannot store.
    public init?(_ attribute: SpanAttribute) {
        switch attribute {
        case .int32(let value): self = .int(Int64(value))
        case .int64(let value): self = .int(value)
        case .int32Array(let values): self = .intArray(values.map(Int64.init))
        case .int64Array(let values): self = .intArray(values)
        case .double(let value): self = .double(value)
        case .doubleArray(let values): self = .doubleArray(values)
        case .bool(let value): self = .bool(value)
        case .boolArray(let values): self = .boolArray(values)
        case .string(let value): self = .string(value)
        case .stringArray(let values): self = .stringArray(values)
        case .stringConvertible(let value): self = .string(value.description)
        case .stringConvertibleArray(let values): self = .stringArray(values.map(\.description))
        default: return nil
        }
    }

    /// The value as a swift-distributed-tracing attribute.
    public var spanAttribute: SpanAttribute {
        switch self {
        case .string(let value): .string(value)
        case .bool(let value): .bool(value)
        case .int(let value): .int64(value)
        case .double(let value): .double(value)
        case .stringArray(let values): .stringArray(values)
        case .boolArray(let values): .boolArray(values)
        case .intArray(let values): .int64Array(values)
        case .doubleArray(let values): .doubleArray(values)
        }
    }
}
