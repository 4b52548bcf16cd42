public import AgentTracing
public import CurlHTTP

/// The wire protocols hostscope speaks to language models.
public enum ProviderKind: String, Sendable, Hashable, CaseIterable {
    /// OpenAI Chat Completions, and any server compatible with it (Ollama, LM Studio, vLLM).
    case openAI = "openai"
    /// Anthropic Messages.
    case anthropic
    /// OpenRouter: OpenAI Chat Completions plus attribution headers and reported cost.
    case openRouter = "openrouter"
    /// The gateway of DESIGN.md: OpenAI-style chunks plus tool frames produced server-side.
    case gateway

    /// The name used in messages.
    public var displayName: String {
        switch self {
        case .openAI: "OpenAI"
        case .anthropic: "Anthropic"
        case .openRouter: "OpenRouter"
        case .gateway: "the gateway"
        }
    }

    /// The base URL used when none is given, per each SDK's convention (OpenAI-style ones include `/v1`).
    public var defaultBaseURL: String? {
        switch self {
        case .openAI: "https://api.openai.com/v1"
        case .anthropic: "https://api.anthropic.com"
        case .openRouter: "https://openrouter.ai/api/v1"
        case .gateway: nil
        }
    }

    /// The environment variable that holds the API key by default.
    public var apiKeyVariable: String? {
        switch self {
        case .openAI: "OPENAI_API_KEY"
        case .anthropic: "ANTHROPIC_API_KEY"
        case .openRouter: "OPENROUTER_API_KEY"
        case .gateway: nil
        }
    }

    /// The path appended to the base URL for a chat call.
    var endpointPath: String {
        switch self {
        case .openAI, .openRouter: "/chat/completions"
        case .anthropic: "/v1/messages"
        case .gateway: "/v1/chat/completions"
        }
    }
}

/// Prices of a model in US dollars per million tokens, for a `cost_usd` the provider does not report itself.
public struct ModelPricing: Sendable, Hashable {
    /// Dollars per million input tokens.
    public var inputPerMillion: Double
    /// Dollars per million output tokens.
    public var outputPerMillion: Double

    /// Creates prices.
    public init(inputPerMillion: Double, outputPerMillion: Double) {
        self.inputPerMillion = inputPerMillion
        self.outputPerMillion = outputPerMillion
    }

    /// The cost of a call with these token counts.
    public func cost(inputTokens: Int, outputTokens: Int) -> Double {
        (Double(inputTokens) * inputPerMillion + Double(outputTokens) * outputPerMillion) / 1_000_000
    }
}

/// Where and how to reach one provider.
public struct ProviderConfiguration: Sendable {
    /// The wire protocol.
    public var kind: ProviderKind
    /// The base URL without a trailing slash, following the provider's SDK convention (see DESIGN.md).
    public var baseURL: String
    /// The API key, if the server needs one (local OpenAI-compatible servers usually do not).
    public var apiKey: APIKey?
    /// Headers sent with every call, e.g. OpenRouter's `HTTP-Referer` and `X-Title`.
    public var extraHeaders: HTTPHeaders
    /// Connect and idle timeouts; the idle one bounds the wait for the first token and between tokens.
    public var timeouts: HTTPTimeouts
    /// Prices to compute `cost_usd` when the provider does not report a cost.
    public var pricing: ModelPricing?
    /// The `anthropic-version` header.
    public var anthropicVersion: String
    /// The largest error body read to explain a failed call.
    public var maxErrorBodyBytes: Int

    /// Creates a configuration; `baseURL` defaults to the kind's public endpoint, and OpenRouter gets an
    /// `X-Title: hostscope` header unless `extraHeaders` names a title.
    public init(
        kind: ProviderKind, baseURL: String? = nil, apiKey: APIKey? = nil, extraHeaders: HTTPHeaders = [:],
        timeouts: HTTPTimeouts = HTTPTimeouts(connect: .seconds(10), idle: .seconds(120)),
        pricing: ModelPricing? = nil, anthropicVersion: String = "2023-06-01"
    ) {
        self.kind = kind
        var base = baseURL ?? kind.defaultBaseURL ?? ""
        while base.hasSuffix("/") {
            base.removeLast()
        }
        self.baseURL = base
        self.apiKey = apiKey
        var headers = extraHeaders
        if kind == .openRouter, !headers.contains(name: "X-Title") {
            headers.add(name: "X-Title", value: "hostscope")
        }
        self.extraHeaders = headers
        self.timeouts = timeouts
        self.pricing = pricing
        self.anthropicVersion = anthropicVersion
        self.maxErrorBodyBytes = 64 * 1024
    }

    /// The URL a chat call is posted to.
    public var endpointURL: String { baseURL + kind.endpointPath }

    /// A scrubber for text from the provider's side (an error body, an error frame): careless servers echo
    /// what they were sent, so the API key and the values of the headers the user passed (added with
    /// `secret: true`) that may be credentials (``Redaction/headerSecrets(name:value:)``) become `REDACTED`.
    /// `nil` when there is nothing to scrub.
    public var serverTextScrubber: SecretScrubber? {
        var secrets = extraHeaders.secretFields.flatMap { Redaction.headerSecrets(name: $0.name, value: $0.value) }
        apiKey?.registerForRedaction { secrets.append($0) }
        return secrets.isEmpty ? nil : SecretScrubber(secrets: secrets)
    }
}
