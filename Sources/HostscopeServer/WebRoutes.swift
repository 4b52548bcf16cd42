import HTTPTypes
import HostscopeWeb
import Hummingbird
import NIOCore
import ServeAPI

/// The dashboard's routes: the page at `/` for a browser (the JSON index stays for anything that does not
/// ask for HTML) and its assets under `/assets/`. Neither needs the token: they hold no host's data, and
/// the page asks for the token before it reads the API.
enum WebRoutes {
    static func add(to router: Router<ServeRequestContext>) {
        router.get("/assets/:name") { request, context in
            let name = context.parameters.get("name") ?? ""
            guard let asset = WebAssets.assets[name] else {
                throw APIError.notFound("no asset named \(name); the page at / names the assets it uses")
            }
            return response(asset, request)
        }
    }

    /// `GET /`: the page when the client asks for HTML, else the JSON list of endpoints.
    static func index(_ request: Request) -> Response {
        guard wantsPage(request) else { return Response.json(ServeRoutes.index) }
        return response(WebAssets.page, request)
    }

    /// Whether a request is answered without the token: the page (`/` asked for as HTML) and its assets.
    static func isOpen(_ request: Request) -> Bool {
        request.uri.path.hasPrefix("/assets/") || (request.uri.path == "/" && wantsPage(request))
    }

    static func wantsPage(_ request: Request) -> Bool {
        wantsPage(accept: request.headers[.accept])
    }

    static func wantsPage(accept: String?) -> Bool {
        accept?.contains("text/html") ?? false
    }

    /// The page or asset a `GET` of `path` (without its query) is answered with, or `nil` for anything else.
    static func asset(path: String, accept: String?) -> WebAsset? {
        if path == "/" { return wantsPage(accept: accept) ? WebAssets.page : nil }
        guard path.hasPrefix("/assets/") else { return nil }
        return WebAssets.assets[String(path.dropFirst("/assets/".count))]
    }

    /// What to answer for `asset` given the request's headers: 304, or the bytes gzip-compressed where taken.
    static func answer(_ asset: WebAsset, _ headers: HTTPFields) -> WebAnswer {
        let coding = ContentCoding.negotiate(acceptEncoding: headers[.acceptEncoding])
        return WebAssets.answer(asset, ifNoneMatch: headers[.ifNoneMatch], acceptsGzip: coding == .gzip)
    }

    /// An answer's headers (Hummingbird adds the length of a routed answer).
    static func fields(_ answer: WebAnswer) -> HTTPFields {
        var headers = HTTPFields()
        for (name, value) in answer.headers {
            if let field = HTTPField.Name(name) { headers.append(HTTPField(name: field, value: value)) }
        }
        return headers
    }

    static func response(_ asset: WebAsset, _ request: Request) -> Response {
        let answer = answer(asset, request.headers)
        return Response(
            status: HTTPResponse.Status(code: answer.status), headers: fields(answer),
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body)))
    }
}
