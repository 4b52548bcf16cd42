/// A span that has ended: the value the ring buffer holds, exporters encode, persistence stores
/// (as its flat JSON, see `FinishedSpan+FlatJSON.swift`) and `trace list/show` print.
///
/// Times are nanoseconds since the Unix epoch (UTC), as in OTLP. Attribute order is the order in
/// which they were first set.
public struct FinishedSpan: Sendable, Equatable {
    /// The trace this span belongs to.
    public var traceID: TraceID
    /// This span's id.
    public var spanID: SpanID
    /// The parent span's id; `nil` for a root span.
    public var parentSpanID: SpanID?
    /// W3C `tracestate` inherited from a remote parent ("" when none).
    public var traceState: String
    /// The operation, e.g. `exec cat` or `chat`.
    public var name: String
    /// Client, server, internal, producer or consumer.
    public var kind: Kind
    /// Start, in nanoseconds since the Unix epoch.
    public var startNanoseconds: UInt64
    /// End, in nanoseconds since the Unix epoch.
    public var endNanoseconds: UInt64
    /// Unset, ok, or error with a message.
    public var status: Status
    /// Typed attributes in the order they were first set, keys unique.
    public var attributes: [Attribute]
    /// Events in the order they were added.
    public var events: [Event]
    /// Links to other spans.
    public var links: [Link]
    /// The process that recorded the span: `service.name`, `service.version`, `host.name`.
    public var resource: TraceResource
    /// Attributes not kept because of ``SpanLimits`` (or truncation on export).
    public var droppedAttributeCount: Int
    /// Events not kept because of ``SpanLimits``.
    public var droppedEventCount: Int
    /// Links not kept because of ``SpanLimits``.
    public var droppedLinkCount: Int

    public init(
        traceID: TraceID, spanID: SpanID, parentSpanID: SpanID? = nil, traceState: String = "", name: String,
        kind: Kind = .internal, startNanoseconds: UInt64, endNanoseconds: UInt64, status: Status = Status(),
        attributes: [Attribute] = [], events: [Event] = [], links: [Link] = [], resource: TraceResource,
        droppedAttributeCount: Int = 0, droppedEventCount: Int = 0, droppedLinkCount: Int = 0
    ) {
        self.traceID = traceID
        self.spanID = spanID
        self.parentSpanID = parentSpanID
        self.traceState = traceState
        self.name = name
        self.kind = kind
        self.startNanoseconds = startNanoseconds
        self.endNanoseconds = endNanoseconds
        self.status = status
        self.attributes = attributes
        self.events = events
        self.links = links
        self.resource = resource
        self.droppedAttributeCount = droppedAttributeCount
        self.droppedEventCount = droppedEventCount
        self.droppedLinkCount = droppedLinkCount
    }

    /// End minus start, zero if the clock went backwards.
    public var durationNanoseconds: UInt64 {
        endNanoseconds >= startNanoseconds ? endNanoseconds - startNanoseconds : 0
    }

    /// The duration in milliseconds, as `trace list` and the flat format show it.
    public var durationMilliseconds: Double { Double(durationNanoseconds) / 1_000_000 }

    /// The span's context, for links and for parenting work that continues from a stored span.
    public var context: SpanContext { SpanContext(traceID: traceID, spanID: spanID, traceState: traceState) }

    /// The span's role, numbered as OTLP's `Span.SpanKind`.
    public enum Kind: Int, Sendable, Equatable, CaseIterable {
        case `internal` = 1
        case server = 2
        case client = 3
        case producer = 4
        case consumer = 5

        /// The lowercase name the flat format and `trace list` use.
        public var name: String {
            switch self {
            case .internal: "internal"
            case .server: "server"
            case .client: "client"
            case .producer: "producer"
            case .consumer: "consumer"
            }
        }

        /// The kind for a flat-format name.
        public init?(name: String) {
            guard let kind = Self.allCases.first(where: { $0.name == name }) else { return nil }
            self = kind
        }
    }

    /// OpenTelemetry's span status: unset unless the instrumentation decided.
    public struct Status: Sendable, Equatable {
        public var code: Code
        /// Set only with ``Code/error``, as OpenTelemetry asks.
        public var message: String?

        public init(code: Code = .unset, message: String? = nil) {
            self.code = code
            self.message = message
        }

        /// Numbered as OTLP's `Status.StatusCode`.
        public enum Code: Int, Sendable, Equatable, CaseIterable {
            case unset = 0
            case ok = 1
            case error = 2

            /// The lowercase name the flat format uses.
            public var name: String {
                switch self {
                case .unset: "unset"
                case .ok: "ok"
                case .error: "error"
                }
            }

            /// The code for a flat-format name.
            public init?(name: String) {
                guard let code = Self.allCases.first(where: { $0.name == name }) else { return nil }
                self = code
            }
        }
    }

    /// Something that happened at one instant during the span (a retry, a stderr line, an error).
    public struct Event: Sendable, Equatable {
        public var name: String
        public var timeNanoseconds: UInt64
        public var attributes: [Attribute]
        public var droppedAttributeCount: Int

        public init(name: String, timeNanoseconds: UInt64, attributes: [Attribute] = [], droppedAttributeCount: Int = 0)
        {
            self.name = name
            self.timeNanoseconds = timeNanoseconds
            self.attributes = attributes
            self.droppedAttributeCount = droppedAttributeCount
        }
    }

    /// A reference to another span, possibly in another trace (a chat turn linking its tool calls).
    public struct Link: Sendable, Equatable {
        public var traceID: TraceID
        public var spanID: SpanID
        public var traceState: String
        public var attributes: [Attribute]
        public var droppedAttributeCount: Int

        public init(
            traceID: TraceID, spanID: SpanID, traceState: String = "", attributes: [Attribute] = [],
            droppedAttributeCount: Int = 0
        ) {
            self.traceID = traceID
            self.spanID = spanID
            self.traceState = traceState
            self.attributes = attributes
            self.droppedAttributeCount = droppedAttributeCount
        }
    }
}

extension FinishedSpan {
    /// The value of the span attribute with this key.
    public subscript(attribute key: String) -> AttributeValue? { attributes[key] }
}

/// The entity telemetry comes from, as OTLP's `Resource`: hostscope on one machine for spans, a watched host
/// for its metrics.
public struct TraceResource: Sendable, Equatable {
    public var attributes: [Attribute]

    public init(attributes: [Attribute]) {
        self.attributes = attributes
    }

    /// These attributes with `overrides` applied: an attribute of the same key is replaced in place, others are
    /// added at the end.
    public func merging(_ overrides: [Attribute]) -> TraceResource {
        var merged = attributes
        for attribute in overrides {
            if let index = merged.firstIndex(where: { $0.key == attribute.key }) {
                merged[index].value = attribute.value
            } else {
                merged.append(attribute)
            }
        }
        return TraceResource(attributes: merged)
    }

    /// `service.name=hostscope`, `service.version`, `host.name`, in that order.
    public static func hostscope(version: String, hostName: String) -> TraceResource {
        TraceResource(attributes: [
            Attribute("service.name", .string("hostscope")),
            Attribute("service.version", .string(version)),
            Attribute("host.name", .string(hostName)),
        ])
    }
}

/// The instrumentation scope that exports name (OTLP's `InstrumentationScope`).
public struct InstrumentationScope: Sendable, Equatable {
    public var name: String
    public var version: String

    public init(name: String = "hostscope", version: String) {
        self.name = name
        self.version = version
    }
}
