import AgentTracing
import Testing
import Tracing

@Suite struct RecordingSpanTests {
    @Test func attributesKeepTheOrderTheyWereFirstSetIn() throws {
        let (tracer, _) = SampleTraces.tracer()
        let span = tracer.startSpan("ordered")
        span.setAttribute("z", "last letter")
        span.setAttribute("a", 1)
        span.setAttribute("z", "replaced in place")
        span.end()
        let finished = try #require(tracer.finishedSpans().first)
        #expect(finished.attributes == [Attribute("z", "replaced in place"), Attribute("a", 1)])
    }

    @Test func attributesPastTheFirstFourKeepTheirOrderAndAreReplacedInPlace() throws {
        let (tracer, _) = SampleTraces.tracer(limits: SpanLimits(maximumAttributes: 6))
        let span = tracer.startSpan("many attributes")
        for index in 0..<7 { span.setAttribute("key.\(index)", index) }
        span.setAttribute("key.1", "replaced inline")
        span.setAttribute("key.5", "replaced beyond the first four")
        #expect(span.orderedAttributes.map(\.key) == (0..<6).map { "key.\($0)" })
        span.end()
        let finished = try #require(tracer.finishedSpans().first)
        #expect(finished.attributes.map(\.key) == (0..<6).map { "key.\($0)" })
        #expect(finished[attribute: "key.1"] == .string("replaced inline"))
        #expect(finished[attribute: "key.4"] == .int(4))
        #expect(finished[attribute: "key.5"] == .string("replaced beyond the first four"))
        #expect(finished.droppedAttributeCount == 1)
    }

    @Test func theSpanAttributesPropertyMergesIntoTheOrderedSet() throws {
        let (tracer, _) = SampleTraces.tracer()
        let span = tracer.startSpan("dictionary")
        span.setAttribute("kept", "x")
        span.setAttribute("removed", "y")
        span.attributes = ["new.b": 2, "kept": "x2", "new.a": true, "int32": .int32(7), "list": .stringArray(["a"])]
        span.attributes["later"] = "added through the subscript"
        #expect(span.attributes.get("kept") == .string("x2"))
        span.end()
        let finished = try #require(tracer.finishedSpans().first)
        #expect(finished.attributes.map(\.key) == ["kept", "int32", "list", "new.a", "new.b", "later"])
        #expect(finished[attribute: "int32"] == .int(7))
        #expect(finished[attribute: "new.a"] == .bool(true))
    }

    /// Edits through swift-distributed-tracing's generic API, as instrumented libraries make them.
    static func edit(_ span: some Tracing.Span, _ body: (inout SpanAttributes) -> Void) {
        body(&span.attributes)
    }

    @Test func editingThroughTheSubscriptChangesOneKeyAndKeepsTheRestInPlace() throws {
        let (tracer, _) = SampleTraces.tracer(limits: SpanLimits(maximumAttributes: 4), secrets: ["hunter2"])
        let span = tracer.startSpan("subscript")
        span.setAttribute("first", "a")
        span.setAttribute("second", 2)
        Self.edit(span) { $0["third"] = "password hunter2" }
        Self.edit(span) { $0["http.request.header.authorization"] = "Bearer token" }
        #expect(span.attributes.get("third") == .string("password REDACTED"))
        #expect(span.attributes.get("http.request.header.authorization") == .string("REDACTED"))
        Self.edit(span) { $0["first"] = "changed" }
        Self.edit(span) { $0["second"] = nil }
        Self.edit(span) { $0["fifth"] = 5 }
        Self.edit(span) { $0["sixth"] = 6 }  // One over the limit of four.
        // setAttribute after the view was handed out: the view follows.
        span.setAttribute("third", "set directly")
        #expect(span.attributes.get("third") == .string("set directly"))
        span.attributes["first"] = "changed again"
        span.updateAttributes { attributes in
            attributes["http.request.header.authorization"] = "Bearer other"
            attributes["transient"] = 1  // Added and removed in one update: never stored.
            attributes["transient"] = nil
        }
        span.end()
        Self.edit(span) { $0["after end"] = true }
        let finished = try #require(tracer.finishedSpans().first)
        #expect(
            finished.attributes == [
                // Keys added through the dictionary before a read come in key order.
                Attribute("first", "changed again"), Attribute("http.request.header.authorization", "REDACTED"),
                Attribute("third", "set directly"), Attribute("fifth", 5),
            ])
        #expect(finished.droppedAttributeCount == 1)
        #expect(span.attributes.get("after end") == nil)
    }

    @Test func manyTasksEditingOneSpansAttributesAtOnceLoseNoEdit() async throws {
        let tasks = 64
        let editsPerTask = 100
        let (tracer, _) = SampleTraces.tracer(limits: SpanLimits(maximumAttributes: 10_000), secrets: ["hunter2"])
        let span = tracer.startSpan("shared")
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    for edit in 0..<editsPerTask {
                        let key = "task.\(task).edit.\(edit)"
                        // Through the generic API as instrumented libraries edit, on the concrete type, and in
                        // one update of several keys.
                        switch edit % 3 {
                        case 0: Self.edit(span) { $0[key] = "password hunter2" }
                        case 1: span.attributes[key] = "password hunter2"
                        default:
                            span.updateAttributes { attributes in
                                attributes[key] = "password hunter2"
                                attributes["task.\(task).last"] = Int64(edit)
                            }
                        }
                    }
                }
            }
        }
        span.end()
        let finished = try #require(tracer.finishedSpans().first)
        let values = Dictionary(uniqueKeysWithValues: finished.attributes.map { ($0.key, $0.value) })
        let keys = (0..<tasks).flatMap { task in (0..<editsPerTask).map { "task.\(task).edit.\($0)" } }
        let missing = keys.filter { values[$0] == nil }
        #expect(missing.isEmpty, "\(missing.count) edits lost, among them \(missing.prefix(3))")
        #expect(keys.allSatisfy { values[$0] == .string("password REDACTED") })
        let lastEdit = Int64((0..<editsPerTask).last { $0 % 3 == 2 }!)
        #expect((0..<tasks).allSatisfy { values["task.\($0).last"] == .int(lastEdit) })
        #expect(finished.attributes.count == tasks * (editsPerTask + 1))
        #expect(finished.droppedAttributeCount == 0)
    }

    @Test func nothingChangesAfterTheSpanEnds() throws {
        let (tracer, _) = SampleTraces.tracer()
        let span = tracer.startSpan("ended")
        span.end()
        span.setAttribute("late", 1)
        span.addEvent("late event")
        span.setStatus(.error, message: "late")
        span.operationName = "renamed"
        span.end()
        #expect(!span.isRecording)
        #expect(tracer.finishedSpans().count == 1)
        let finished = try #require(tracer.finishedSpans().first)
        #expect(finished.name == "ended")
        #expect(finished.attributes.isEmpty && finished.events.isEmpty && finished.status.code == .unset)
    }

    @Test func okStatusIsFinalAndOnlyErrorsKeepAMessage() throws {
        let (tracer, _) = SampleTraces.tracer()
        let first = tracer.startSpan("ok first")
        first.setStatus(.ok, message: "ignored")
        first.setStatus(.error, message: "too late")
        first.end()
        let second = tracer.startSpan("error then unset")
        second.setStatus(SpanStatus(code: .error, message: "exit status 2"))
        second.setStatus(.unset)
        second.end()
        let spans = tracer.finishedSpans()
        #expect(spans[0].status == FinishedSpan.Status(code: .ok))
        #expect(spans[1].status == FinishedSpan.Status(code: .error, message: "exit status 2"))
    }

    @Test func thrownErrorsBecomeExceptionEventsAndAnErrorStatus() throws {
        struct ProbeFailed: Error, CustomStringConvertible {
            var description: String { "probe failed on web1" }
        }
        let (tracer, _) = SampleTraces.tracer()
        #expect(throws: ProbeFailed.self) {
            try tracer.withSpan("probe") { _ in throw ProbeFailed() }
        }
        let finished = try #require(tracer.finishedSpans().first)
        #expect(finished.status.code == .error)
        let event = try #require(finished.events.first)
        #expect(event.name == "exception")
        #expect(event.attributes["exception.message"] == .string("probe failed on web1"))
        #expect(event.attributes["exception.type"]?.stringValue?.hasSuffix("ProbeFailed") == true)
        #expect(event.timeNanoseconds > finished.startNanoseconds && event.timeNanoseconds < finished.endNanoseconds)
    }

    @Test func eventsAndLinksAreRecordedWithTheirAttributes() throws {
        let (tracer, _) = SampleTraces.tracer()
        let other = tracer.startSpan("other")
        other.end()
        let span = tracer.startSpan("main")
        span.addEvent("retry", attributes: [Attribute("attempt", 2)])
        span.addEvent(
            SpanEvent(name: "library event", at: TraceInstant(nanosecondsSinceEpoch: 42), attributes: ["k": "v"]))
        span.addLink(SpanLink(context: other.context, attributes: ["why": "caused by"]))
        span.addLink(SpanLink(context: .topLevel, attributes: [:]))
        span.end()
        let finished = try #require(tracer.finishedSpans().last)
        #expect(finished.events.map(\.name) == ["retry", "library event"])
        #expect(finished.events[1].timeNanoseconds == 42)
        #expect(finished.events[1].attributes == [Attribute("k", "v")])
        #expect(finished.links.count == 1)
        #expect(finished.links.first?.spanID == other.spanID)
        #expect(finished.links.first?.attributes == [Attribute("why", "caused by")])
    }

    @Test func limitsDropAndCountWhatDoesNotFit() throws {
        let limits = SpanLimits(
            maximumAttributes: 2, maximumEvents: 1, maximumLinks: 1, maximumAttributesPerEvent: 1,
            maximumStringBytes: 40)
        let (tracer, _) = SampleTraces.tracer(limits: limits)
        let span = tracer.startSpan("limited")
        for index in 0..<5 { span.setAttribute("key\(index)", index) }
        span.setAttribute("key0", String(repeating: "é", count: 100))
        span.addEvent("kept", attributes: [Attribute("a", 1), Attribute("b", 2)])
        span.addEvent("dropped")
        span.addLink(to: span.spanContext)
        span.addLink(to: span.spanContext)
        span.end()
        let finished = try #require(tracer.finishedSpans().first)
        #expect(finished.attributes.map(\.key) == ["key0", "key1"])
        #expect(finished.droppedAttributeCount == 3)
        #expect(finished.droppedEventCount == 1)
        #expect(finished.droppedLinkCount == 1)
        #expect(finished.events.first?.droppedAttributeCount == 1)
        // 200 bytes cut to 40: 16 bytes (8 × "é") and the 24-byte marker.
        #expect(finished[attribute: "key0"] == .string(String(repeating: "é", count: 8) + "…[truncated 184 bytes]"))
    }
}
