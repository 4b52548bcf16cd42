@testable import Chat

/// Feeds the bytes to an SSE parser in chunks whose sizes come from `sizes`, as a network hands them over.
private func events(_ body: [UInt8], sizes: [UInt8]) -> (events: [ServerSentEvent], incomplete: Bool) {
    var parser = SSEParser()
    var events: [ServerSentEvent] = []
    var start = 0
    var turn = 0
    while start < body.count {
        let size = sizes.isEmpty ? body.count : max(1, Int(sizes[turn % sizes.count]))
        let end = min(body.count, start + size)
        events += parser.parse(body[start..<end])
        start = end
        turn += 1
    }
    return (events, parser.finish())
}

/// Runs a provider's decoder over a stream, then the end of the body, as a chat turn does.
private func decode<D: ProviderStreamDecoder>(_ decoder: inout D, _ bytes: [UInt8]) {
    var input = FuzzInput(bytes)
    let sizes = input.field(limit: 8)
    var chatEvents: [ChatEvent] = []
    for event in events(input.rest(), sizes: sizes).events {
        decoder.decode(event, into: &chatEvents)
    }
    decoder.finish(into: &chatEvents)
    let done = chatEvents.filter { if case .done = $0 { true } else { false } }
    check(done.count <= 1, "a stream gave \(done.count) done events")
}

extension Harness {
    /// The SSE parser: the same bytes cut into chunks two ways must give the same events.
    static let sse = Harness(name: "sse") { bytes in
        var input = FuzzInput(bytes)
        let sizes = input.field(limit: 8)
        let body = input.rest()
        let chunked = events(body, sizes: sizes)
        let whole = events(body, sizes: [])
        check(chunked.events == whole.events, "chunking changed the events")
        check(chunked.incomplete == whole.incomplete, "chunking changed whether the stream ended cleanly")
    }

    static let openAIStream = Harness(name: "openai-stream") { bytes in
        let kinds: [ProviderKind] = [.openAI, .openRouter, .gateway]
        var decoder = OpenAIStreamDecoder(
            context: DecoderContext(
                kind: kinds[Int(bytes.first ?? 0) % kinds.count], model: "m", pricing: nil, secrets: nil))
        decode(&decoder, Array(bytes.dropFirst()))
    }

    static let anthropicStream = Harness(name: "anthropic-stream") { bytes in
        var decoder = AnthropicStreamDecoder(
            context: DecoderContext(kind: .anthropic, model: "m", pricing: nil, secrets: nil))
        decode(&decoder, bytes)
    }
}
