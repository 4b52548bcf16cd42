public import Tracing

/// W3C Trace Context propagation: outgoing requests carry the current span as `traceparent`
/// (and `tracestate` when upstream sent one); incoming ones continue the caller's trace.
extension RingBufferTracer {
    public func inject<Carrier, Inject: Injector>(
        _ context: ServiceContext, into carrier: inout Carrier, using injector: Inject
    ) where Inject.Carrier == Carrier {
        guard let spanContext = context.spanContext else { return }
        injector.inject(TraceParent.headerValue(for: spanContext), forKey: TraceParent.headerName, into: &carrier)
        if !spanContext.traceState.isEmpty {
            injector.inject(spanContext.traceState, forKey: TraceParent.stateHeaderName, into: &carrier)
        }
    }

    public func extract<Carrier, Extract: Extractor>(
        _ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract
    ) where Extract.Carrier == Carrier {
        guard let header = extractor.extract(key: TraceParent.headerName, from: carrier),
            let remote = TraceParent.parse(
                header, traceState: extractor.extract(key: TraceParent.stateHeaderName, from: carrier))
        else { return }
        context.spanContext = remote
    }

    /// The propagation headers for a context, for HTTP clients that build header lists directly.
    public func propagationHeaders(for context: ServiceContext) -> [(name: String, value: String)] {
        var headers = HeaderList()
        inject(context, into: &headers.fields, using: HeaderListInjector())
        return headers.fields
    }
}

private struct HeaderList {
    var fields: [(name: String, value: String)] = []
}

private struct HeaderListInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [(name: String, value: String)]) {
        carrier.append((key, value))
    }
}
