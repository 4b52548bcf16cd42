import Foundation
import HTTPTypes
import HostStats
import HostscopeCore
import Hummingbird
import NIOCore
import OrderedJSON
import RemoteFiles
import ServeAPI
import ServiceLifecycle
import ValueFormats

/// `/api/v1/files…`: the watched hosts' files, read-only, under the roots of `--files-root` (none by default), for
/// the dashboard's Files screen. Each handler reads its query, makes one call of ``ServedFiles`` and renders.
enum FilesRoutes {
    static func add(to router: Router<ServeRequestContext>, _ serve: ServeContext) {
        let files = serve.files ?? ServedFiles(roots: [])
        router.get("/api/v1/files") { request, _ in
            _ = try QueryParameters(request.uri.query, allowed: [])
            let hosts = serve.watch.hosts.compactMap { host -> JSONValue? in
                guard case .ssh = host else { return nil }
                return .string(host.displayName)
            }
            return Response.json(
                JSONValue.object([
                    "schema": "hostscope.api.files.roots/1",
                    "roots": .array(files.roots.map { .string($0.escaped) }),
                    "hosts": .array(hosts),
                ]).jsonString + "\n")
        }
        router.get("/api/v1/files/:host/list") { request, context in
            let (host, query) = try target(request, context, serve, allowed: ["path", "offset", "limit"])
            let offset = try number(query, "offset", in: 0...Int.max) ?? 0
            let limit = try number(query, "limit", in: 1...files.limits.entries) ?? 500
            let page = try await answer {
                try await files.list(host, path: try path(query), offset: offset, limit: limit)
            }
            var object = JSONObject()
            object.append("schema", "hostscope.api.files.list/1")
            object.append("host", .string(host.displayName))
            object.append("path", .string(page.path.escaped))
            object.append("is_directory", .bool(page.isDirectory))
            object.append("total", .number(Double(page.total)))
            object.append("offset", .number(Double(page.offset)))
            let next = page.offset + page.entries.count
            object.append("next_offset", next < page.total ? .number(Double(next)) : .null)
            object.append("entries", .array(page.entries.map(\.jsonValue)))
            return Response.json(JSONValue.object(object).jsonString + "\n", for: request)
        }
        router.get("/api/v1/files/:host/stat") { request, context in
            let (host, query) = try target(request, context, serve, allowed: ["path"])
            let entry = try await answer { try await files.stat(host, path: try path(query)) }
            return Response.json(
                JSONValue.object([
                    "schema": "hostscope.api.files.stat/1", "host": .string(host.displayName), "entry": entry.jsonValue,
                ]).jsonString + "\n")
        }
        router.get("/api/v1/files/:host/preview") { request, context in
            let (host, query) = try target(request, context, serve, allowed: ["path", "tail", "line"])
            let part: PreviewPart
            if let lines = try number(query, "tail", in: 1...100_000) {
                part = .tail(lines: lines)
            } else if let line = try number(query, "line", in: 1...10_000_000) {
                part = .around(line: line)
            } else {
                part = .automatic
            }
            let shown = try await answer { try await files.preview(host, path: try path(query), part: part) }
            return Response.json(preview(shown, host: host.displayName).jsonString + "\n", for: request)
        }
        router.get("/api/v1/files/:host/grep") { request, context in
            let (host, query) = try target(
                request, context, serve,
                allowed: ["path", "pattern", "ignore_case", "fixed", "recursive", "include", "limit"])
            guard let pattern = query["pattern"], !pattern.isEmpty else {
                throw APIError.badRequest("grep needs a pattern: add pattern=TEXT to the query")
            }
            let options = GrepOptions(
                recursive: try flag(query, "recursive") ?? true, ignoreCase: try flag(query, "ignore_case") ?? false,
                fixedString: try flag(query, "fixed") ?? false, glob: query["include"].map(GlobPattern.init))
            let limit = try number(query, "limit", in: 1...files.limits.entries) ?? 200
            let found = try await answer {
                try await files.grep(host, path: try path(query), pattern: pattern, options: options, limit: limit)
            }
            var object = search(found, schema: "hostscope.api.files.grep/1", host: host.displayName)
            object.append(
                "matches",
                .array(
                    found.items.map { match in
                        .object([
                            "path": .string(match.path.escaped), "line": .number(Double(match.lineNumber)),
                            "text": .string(String(decoding: match.line, as: UTF8.self)),
                        ])
                    }))
            if let summary = found.summary {
                object.append("files_searched", .number(Double(summary.filesSearched)))
                object.append("files_matched", .number(Double(summary.filesMatched)))
                object.append("binary_files_skipped", .number(Double(summary.binaryFilesSkipped)))
            }
            return Response.json(JSONValue.object(object).jsonString + "\n", for: request)
        }
        router.get("/api/v1/files/:host/find") { request, context in
            let (host, query) = try target(
                request, context, serve, allowed: ["path", "name", "type", "max_depth", "limit"])
            var options = FindOptions(
                walk: WalkOptions(maxDepth: try number(query, "max_depth", in: 0...64), includeHidden: true))
            options.name = query["name"].map(GlobPattern.init)
            if let type = query["type"] {
                guard let known = RemoteFileType(rawValue: type) else {
                    throw APIError.badRequest("type must be file, dir, symlink or other")
                }
                options.type = known
            }
            let limit = try number(query, "limit", in: 1...files.limits.entries) ?? 200
            let found = try await answer {
                try await files.find(host, path: try path(query), options: options, limit: limit)
            }
            var object = search(found, schema: "hostscope.api.files.find/1", host: host.displayName)
            object.append("entries", .array(found.items.map(\.jsonValue)))
            return Response.json(JSONValue.object(object).jsonString + "\n", for: request)
        }
        router.get("/api/v1/files/:host/download") { request, context in
            let (host, query) = try target(request, context, serve, allowed: ["path"])
            let asked = try path(query)
            let file = try await answer { try await files.downloadSize(host, path: asked) }
            // No Content-Length: the file is sent as it is when opened again below, which may differ.
            let headers: HTTPFields = [
                .contentType: "application/octet-stream", .cacheControl: "no-store",
                .contentDisposition: attachment(file.path.lastComponent),
            ]
            let body = ResponseBody { writer in
                try await files.download(host, path: asked) { chunk in try await writer.write(ByteBuffer(bytes: chunk))
                }
                try await writer.finish(nil)
            }
            return Response(status: .ok, headers: headers, body: body)
        }
        router.get("/api/v1/files/:host/follow") { request, context in
            let (host, query) = try target(request, context, serve, allowed: ["path", "lines"])
            let asked = try path(query)
            let lines = try number(query, "lines", in: 0...10_000) ?? 100
            // Refused with a status while one can still be sent: a missing file, a directory, a FIFO.
            _ = try await answer { try await files.regularFile(host, path: asked) }
            let headers: HTTPFields = [
                .contentType: "application/x-ndjson", .cacheControl: "no-store",
                HTTPField.Name("X-Accel-Buffering")!: "no",
            ]
            return Response(status: .ok, headers: headers, body: followBody(files, host, asked, lines: lines))
        }
    }

    /// The host (watched, by name) and the query of a files request.
    static func target(
        _ request: Request, _ context: ServeRequestContext, _ serve: ServeContext, allowed: Set<String>
    ) throws -> (ResolvedHost, QueryParameters) {
        let name = try ServeRoutes.hostParameter(context)
        let query = try QueryParameters(request.uri.query, allowed: allowed)
        guard let host = serve.watch.hosts.first(where: { $0.displayName == name }) else {
            throw ServeRoutes.notWatched(name)
        }
        return (host, query)
    }

    static func path(_ query: QueryParameters) throws -> String {
        guard let path = query["path"], !path.isEmpty else {
            throw APIError.badRequest(
                "the query needs path=PATH, an absolute path under one of the roots (GET /api/v1/files lists them)")
        }
        return path
    }

    static func number(_ query: QueryParameters, _ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = query[name] else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw APIError.badRequest("\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    static func flag(_ query: QueryParameters, _ name: String) throws -> Bool? {
        switch query[name] {
        case nil: return nil
        case "true", "1": return true
        case "false", "0": return false
        default: throw APIError.badRequest("\(name) must be true or false")
        }
    }

    /// Runs a call of ``ServedFiles`` and turns its failures into the API's error shape.
    static func answer<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as APIError {
            throw error
        } catch {
            throw apiError(error)
        }
    }

    /// The status and code of a files failure; the sentence is the one the command line prints.
    static func apiError(_ error: any Error) -> APIError {
        switch error {
        case let error as CoreError:
            switch error.code {
            case .notAllowed: return APIError(status: 403, code: "files_not_allowed", message: error.message)
            case .busy: return APIError(status: 429, code: "files_busy", message: error.message, retryAfterSeconds: 2)
            case .tooLarge: return APIError(status: 413, code: "file_too_large", message: error.message)
            case .invalidRequest: return APIError.badRequest(error.message)
            case .notFound: return APIError.notFound(error.message)
            case .failed: return APIError(status: 502, code: "files_failed", message: error.message)
            }
        case let error as RemoteFilesError:
            let status: Int
            switch error.code {
            case .notFound: status = 404
            case .permissionDenied, .outsideRoot: status = 403
            case .changedWhileReading: status = 409
            case .timeout: status = 504
            case .connectionLost, .failed, .localFile, .interrupted: status = 502
            default: status = 400
            }
            return APIError(status: status, code: snakeCase(error.code.description), message: error.message)
        case let error as CollectionError:
            return APIError(status: 502, code: "host_unreachable", message: error.message)
        default:
            return APIError(status: 502, code: "files_failed", message: "reading the file failed: \(error)")
        }
    }

    /// `outsideRoot` → `outside_root`.
    static func snakeCase(_ name: String) -> String {
        var text = ""
        for character in name {
            if character.isUppercase { text += "_" + character.lowercased() } else { text.append(character) }
        }
        return text
    }

    /// A preview as JSON: the text (or, for a binary file, a hex dump of its first 512 bytes) and where it stands.
    static func preview(_ shown: ServedPreview, host: String) -> JSONValue {
        let preview = shown.preview
        var object = JSONObject()
        object.append("schema", "hostscope.api.files.preview/1")
        object.append("host", .string(host))
        object.append("path", .string(preview.path.escaped))
        object.append("size", .uint(preview.fileSize))
        object.append("offset", .uint(preview.offset))
        object.append("length", .number(Double(preview.bytes.count)))
        object.append("truncated", .bool(preview.truncated))
        object.append("first_line", shown.firstLine.map { .number(Double($0)) } ?? .null)
        object.append("binary", .bool(preview.isBinary))
        object.append("type_guess", preview.typeGuess.map { .string($0) } ?? .null)
        if preview.isBinary {
            object.append("text", .null)
            let hex = ContentSniffer.hexDump(Array(preview.bytes.prefix(512)), base: preview.offset)
            object.append("hex", .array(hex.map { .string($0) }))
        } else {
            object.append("text", .string(String(decoding: preview.bytes, as: UTF8.self)))
            object.append("hex", .null)
        }
        return .object(object)
    }

    /// The keys a grep and a find share.
    static func search<Item>(_ found: ServedSearch<Item>, schema: String, host: String) -> JSONObject {
        var object = JSONObject()
        object.append("schema", .string(schema))
        object.append("host", .string(host))
        object.append("complete", .bool(found.complete))
        object.append("problems", .array(found.problems.map { .string($0) }))
        return object
    }

    /// `attachment` with the file's name: printable ASCII in `filename` (anything else as `_`), the exact name
    /// percent-encoded in `filename*`.
    static func attachment(_ name: [UInt8]) -> String {
        let plain = String(
            decoding: name.map { (0x20...0x7E).contains($0) && $0 != UInt8(ascii: "\"") && $0 != 0x5C ? $0 : 0x5F },
            as: UTF8.self)
        let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)
        let encoded = name.map {
            unreserved.contains($0) ? String(UnicodeScalar($0)) : "%" + Hex.string(UInt64($0), width: 2).uppercased()
        }
        .joined()
        return "attachment; filename=\"\(plain)\"; filename*=UTF-8''\(encoded)"
    }

    /// What a live tail sends, one JSON object per line: `{"text":…}` for the lines before and every piece
    /// appended, an empty line every 5 s (so a page that went away is noticed), and last `{"end":…}` saying why
    /// it stopped. The tail runs in a task of its own; the page leaving (a write that fails) cancels it, which
    /// closes the file and the session.
    static func followBody(_ files: ServedFiles, _ host: ResolvedHost, _ path: String, lines: Int) -> ResponseBody {
        enum Piece: Sendable {
            case text([UInt8]), beat, end(String)
        }
        return ResponseBody { writer in
            let (pieces, continuation) = AsyncStream<Piece>.makeStream(bufferingPolicy: .bufferingOldest(64))
            let tail = Task {
                let end: String
                do {
                    let ended = try await files.follow(host, path: path, lines: lines) { bytes in
                        if case .dropped = continuation.yield(.text(bytes)) { throw FollowOverrun() }
                    }
                    end =
                        ended?.message(host: host.displayName)
                        ?? "\(host.displayName): \(path) was followed for \(DurationText.format(files.limits.followTime)); follow it again to go on"
                } catch is FollowOverrun {
                    end = "\(host.displayName): \(path) grew faster than the page read it; stopped following it"
                } catch is CancellationError {
                    end = ""
                } catch {
                    end = apiError(error).message
                }
                continuation.yield(.end(end))
                continuation.finish()
            }
            let beat = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(5))
                    continuation.yield(.beat)
                }
            }
            defer {
                tail.cancel()
                beat.cancel()
            }
            for await piece in pieces {
                let line: String
                switch piece {
                case .text(let bytes):
                    line = JSONValue.object(["text": .string(String(decoding: bytes, as: UTF8.self))]).jsonString
                case .beat: line = ""
                case .end(let sentence): line = JSONValue.object(["end": .string(sentence)]).jsonString
                }
                try await writer.write(ByteBuffer(string: line + "\n"))
            }
            try await writer.finish(nil)
        }
    }
}

/// A live tail whose page reads slower than the file grows.
private struct FollowOverrun: Error {}

/// Closes the idle SSH sessions of the files routes when `serve` stops.
struct FilesSessionsService: Service {
    let files: ServedFiles?

    func run() async throws {
        try? await gracefulShutdown()
        await files?.close()
    }
}
