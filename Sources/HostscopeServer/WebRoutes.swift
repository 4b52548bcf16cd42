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
        request.headers[.accept]?.contains("text/html") ?? false
    }

    static func response(_ asset: WebAsset, _ request: Request) -> Response {
        let coding = ContentCoding.negotiate(acceptEncoding: request.headers[.acceptEncoding])
        let answer = WebAssets.answer(asset, ifNoneMatch: request.headers[.ifNoneMatch], acceptsGzip: coding == .gzip)
        var headers = HTTPFields()
        for (name, value) in answer.headers {
            if let field = HTTPField.Name(name) { headers.append(HTTPField(name: field, value: value)) }
        }
        return Response(
            status: HTTPResponse.Status(code: answer.status), headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body)))
    }
}
