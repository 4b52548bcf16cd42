import HTTPTypes
import HostscopeWeb
import NIOCore
import NIOHTTPTypes
import ServeAPI

/// Answers the dashboard's page (`/` asked for as HTML) and its assets on the connection's own event loop, as soon
/// as a request's head is read. They are fixed bytes compiled in and compressed once; routed like the API, each
/// would wait for a thread of the concurrency pool, which a large fleet's collection keeps busy (seconds with 300
/// hosts on two cores, docs/benchmarks.md#web-dashboard). A request it does not answer whole goes on to the router
/// unchanged, which answers or refuses it as before: another path or method, a body, a `Host` not admitted, a
/// client over its rate, `Connection: close`, or a request behind one the router is still answering.
final class WebAssetShortcut: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let hostPolicy: HostPolicyBox
    private let requestGuard: GuardMiddleware
    /// Requests handed on whose answer has not ended: an answer written here now would overtake theirs.
    private var handedOn = 0
    /// The request being answered here: its end is not handed on.
    private var answering = false

    init(hostPolicy: HostPolicyBox, requestGuard: GuardMiddleware) {
        self.hostPolicy = hostPolicy
        self.requestGuard = requestGuard
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            if handedOn == 0, let answer = answer(head, client: context.remoteAddress?.ipAddress ?? "unknown") {
                answering = true
                context.triggerUserOutboundEvent(RequestArrived(), promise: nil)
                var fields = WebRoutes.fields(answer)
                if answer.status != 304 { fields[.contentLength] = String(answer.body.count) }
                let response = HTTPResponse(status: .init(code: answer.status), headerFields: fields)
                context.write(wrapOutboundOut(.head(response)), promise: nil)
                if !answer.body.isEmpty {
                    context.write(
                        wrapOutboundOut(.body(context.channel.allocator.buffer(bytes: answer.body))), promise: nil)
                }
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                return
            }
            handedOn += 1
            context.fireChannelRead(data)
        case .body:
            if !answering { context.fireChannelRead(data) }
        case .end:
            if answering { answering = false } else { context.fireChannelRead(data) }
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data), handedOn > 0 { handedOn -= 1 }
        context.write(data, promise: promise)
    }

    /// The answer to a request this handler takes whole, or `nil` to hand it on.
    private func answer(_ head: HTTPRequest, client: String) -> WebAnswer? {
        guard head.method == .get, head.headerFields[.connection] == nil,
            head.headerFields[.contentLength].map({ $0 == "0" }) ?? true, head.headerFields[.transferEncoding] == nil,
            let target = head.path, target.utf8.count <= requestGuard.maximumTargetLength,
            let asset = WebRoutes.asset(path: String(target.prefix { $0 != "?" }), accept: head.headerFields[.accept]),
            hostPolicy.current.admits(head.authority),
            requestGuard.admitsRate(authorization: head.headerFields[.authorization], client: client)
        else { return nil }
        return WebRoutes.answer(asset, head.headerFields)
    }
}
