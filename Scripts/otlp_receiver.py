#!/usr/bin/env python3
"""An OTLP/HTTP trace and metrics receiver on loopback that decodes every request strictly, for testing exporters.

It needs PyPI's opentelemetry-proto and protobuf (`pip install -r Scripts/requirements.txt`). It binds
127.0.0.1 (or ::1) on the given port, 0 meaning a free one, and prints one JSON line on stdout when ready:

    {"event": "listening", "host": "127.0.0.1", "port": 40123, "endpoint": "http://127.0.0.1:40123/v1/traces"}

Endpoints:

    POST /v1/traces      an ExportTraceServiceRequest as application/json (OTLP/JSON: lowerCamelCase keys, hex
                         trace and span ids) or application/x-protobuf, optionally Content-Encoding: gzip.
                         Answers like a collector: 200 with `{}` (or `{"partialSuccess": {...}}`) for JSON, a
                         serialized ExportTraceServiceResponse for protobuf; a body that does not decode gets
                         400 with a google.rpc.Status saying why; 415 for another content type, 413 when too big.
    POST /v1/metrics     an ExportMetricsServiceRequest, the same encodings and answers (partial success counts
                         rejectedDataPoints).
    GET  /received       JSON: every accepted trace request (span count, resource/scope/span names, ids, attributes,
                         events, headers with secret values redacted, traceparent), every accepted metrics request
                         under "metric_requests" (resources, metrics with type, unit, temporality, monotonicity and
                         data points), and every attempt's status
    POST /control/fail   JSON {"status": 429, "count": 2, "retry_after": "1", "message": "..."}: answer the next
                         `count` requests (traces or metrics) with `status` (429, 502, 503, 504, 400, ...) without
                         storing them
    POST /control/partial
                         JSON {"rejected_spans": 1, "error_message": "...", "count": 1}: accept the next `count`
                         requests but report that many spans rejected in partialSuccess
    POST /control/reset  forget everything received and every pending failure

Options: --port N, --host 127.0.0.1|::1, --ndjson FILE (append each accepted trace request as one OTLP/JSON line,
as a collector's file exporter writes), --metrics-ndjson FILE (the same for metrics requests), --fail STATUS[:COUNT[:RETRY_AFTER]] (repeatable; same as
/control/fail), --require-header NAME=VALUE (repeatable; a trace request without that exact header value is
answered 401 Unauthenticated, as a collector with an authenticator extension answers), --max-body-bytes N,
--exit-on-stdin-eof (stop when the parent process goes away), --verbose.
"""

import argparse
import base64
import gzip
import ipaddress
import json
import os
import re
import socket
import signal
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

try:
    from google.protobuf import json_format
    from google.protobuf.descriptor import FieldDescriptor
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
except ImportError as exc:  # pragma: no cover
    sys.stderr.write("otlp_receiver.py needs opentelemetry-proto and protobuf (%s): "
                     "pip install -r Scripts/requirements.txt\n" % exc)
    sys.exit(2)

Request = trace_service_pb2.ExportTraceServiceRequest
Response = trace_service_pb2.ExportTraceServiceResponse
MetricsRequest = metrics_service_pb2.ExportMetricsServiceRequest
MetricsResponse = metrics_service_pb2.ExportMetricsServiceResponse

SPAN_MESSAGES = {"opentelemetry.proto.trace.v1.Span", "opentelemetry.proto.trace.v1.Span.Link"}
ID_LENGTHS = {"trace_id": 32, "span_id": 16, "parent_span_id": 16}
HEX = re.compile(r"^[0-9a-fA-F]*$")
SECRET_HEADER_FRAGMENTS = ("auth", "token", "secret", "password", "passwd", "api-key", "apikey", "api_key",
                           "session", "signature", "credential", "cookie")
# google.rpc.Code for the HTTP statuses a collector answers with.
GRPC_CODES = {400: 3, 401: 16, 403: 7, 404: 5, 413: 8, 415: 3, 429: 8, 500: 13, 502: 14, 503: 14, 504: 14}


class DecodeFailure(Exception):
    pass


def is_repeated(field):
    if hasattr(field, "is_repeated"):
        return field.is_repeated
    return field.label == FieldDescriptor.LABEL_REPEATED


def convert_id(value, name, path):
    """OTLP/JSON writes ids as hex; protobuf's JSON parser expects base64 for bytes fields."""
    if not isinstance(value, str):
        raise DecodeFailure("%s: %s must be a hex string, got %s" % (path, name, type(value).__name__))
    if value == "":
        return ""
    want = ID_LENGTHS[name]
    if not HEX.match(value) or len(value) != want:
        raise DecodeFailure("%s: %s %r is not %d hex digits (OTLP/JSON ids are hex, not base64)"
                            % (path, name, value, want))
    return base64.b64encode(bytes.fromhex(value)).decode()


def hex_ids_to_base64(obj, descriptor, path):
    if not isinstance(obj, dict):
        raise DecodeFailure("%s: expected a JSON object for %s, got %s"
                            % (path or "body", descriptor.name, type(obj).__name__))
    by_json = {f.json_name: f for f in descriptor.fields}
    by_name = {f.name: f for f in descriptor.fields}
    out = {}
    for key, value in obj.items():
        sub = "%s.%s" % (path, key) if path else key
        field = by_json.get(key)
        if field is None:
            if key in by_name:
                raise DecodeFailure("%s: snake_case key %r; OTLP/JSON uses lowerCamelCase %r"
                                    % (sub, key, by_name[key].json_name))
            out[key] = value  # json_format rejects unknown fields with its own message
            continue
        if value is None:
            out[key] = value
            continue

        def one(item, item_path):
            if field.type == FieldDescriptor.TYPE_MESSAGE:
                return hex_ids_to_base64(item, field.message_type, item_path)
            if field.type == FieldDescriptor.TYPE_BYTES and field.name in ID_LENGTHS \
                    and descriptor.full_name in SPAN_MESSAGES:
                return convert_id(item, field.name, item_path)
            return item

        if is_repeated(field):
            if not isinstance(value, list):
                raise DecodeFailure("%s: expected a JSON array" % sub)
            out[key] = [one(item, "%s[%d]" % (sub, i)) for i, item in enumerate(value)]
        else:
            out[key] = one(value, sub)
    return out


def decode_json(body, request_type=Request):
    try:
        obj = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DecodeFailure("the body is not valid JSON: %s" % exc)
    fixed = hex_ids_to_base64(obj, request_type.DESCRIPTOR, "")
    message = request_type()
    try:
        json_format.ParseDict(fixed, message, ignore_unknown_fields=False)
    except json_format.ParseError as exc:
        raise DecodeFailure("the body is not an OTLP/JSON %s: %s" % (request_type.DESCRIPTOR.name, exc))
    return message


def decode_protobuf(body, request_type=Request):
    message = request_type()
    try:
        message.ParseFromString(body)
    except DecodeError as exc:
        raise DecodeFailure("the body is not a protobuf %s: %s" % (request_type.DESCRIPTOR.name, exc))
    return message


def any_value(value):
    kind = value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: any_value(kv.value) for kv in value.kvlist_value.values}
    if kind == "bytes_value":
        return base64.b64encode(value.bytes_value).decode()
    return getattr(value, kind)


def attributes(key_values):
    return {kv.key: any_value(kv.value) for kv in key_values}


def summarize(message):
    resources = []
    for rs in message.resource_spans:
        scopes = []
        for ss in rs.scope_spans:
            spans = []
            for span in ss.spans:
                spans.append({
                    "name": span.name,
                    "trace_id": span.trace_id.hex(),
                    "span_id": span.span_id.hex(),
                    "parent_span_id": span.parent_span_id.hex(),
                    "kind": span.kind,
                    # 64-bit values as decimal strings, as OTLP/JSON writes them: JSON readers lose digits past 2^53.
                    "start_time_unix_nano": str(span.start_time_unix_nano),
                    "end_time_unix_nano": str(span.end_time_unix_nano),
                    "status": {"code": span.status.code, "message": span.status.message},
                    "attributes": attributes(span.attributes),
                    "events": [{"name": e.name, "time_unix_nano": str(e.time_unix_nano),
                                "attributes": attributes(e.attributes)} for e in span.events],
                    "links": [{"trace_id": l.trace_id.hex(), "span_id": l.span_id.hex()} for l in span.links],
                })
            scopes.append({"scope": {"name": ss.scope.name, "version": ss.scope.version}, "spans": spans})
        resources.append({"resource": {"attributes": attributes(rs.resource.attributes)}, "scope_spans": scopes})
    return resources


def summarize_metrics(message):
    resources = []
    for rm in message.resource_metrics:
        metrics = []
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                kind = metric.WhichOneof("data")
                data = getattr(metric, kind) if kind else None
                points = []
                for point in (data.data_points if data is not None else []):
                    value_kind = point.WhichOneof("value")
                    points.append({
                        "attributes": attributes(point.attributes),
                        "start_time_unix_nano": str(point.start_time_unix_nano),
                        "time_unix_nano": str(point.time_unix_nano),
                        "value_type": value_kind,
                        "value": getattr(point, value_kind) if value_kind else None,
                    })
                entry = {"name": metric.name, "description": metric.description, "unit": metric.unit,
                         "type": kind, "scope": sm.scope.name, "data_points": points}
                if kind == "sum":
                    entry["aggregation_temporality"] = data.aggregation_temporality
                    entry["is_monotonic"] = data.is_monotonic
                metrics.append(entry)
        resources.append({"resource": {"attributes": attributes(rm.resource.attributes)}, "metrics": metrics})
    return resources


def otlp_json_line(message):
    """The request as OTLP/JSON (hex ids, int64 as strings, enums as integers), one line."""
    obj = json_format.MessageToDict(message, use_integers_for_enums=True)

    def fix(node):
        if isinstance(node, dict):
            for key in ("traceId", "spanId", "parentSpanId"):
                if isinstance(node.get(key), str):
                    node[key] = base64.b64decode(node[key]).hex()
            for value in node.values():
                fix(value)
        elif isinstance(node, list):
            for value in node:
                fix(value)
    for rs in obj.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            fix(ss.get("spans", []))
    return json.dumps(obj, separators=(",", ":"))


def redacted_headers(headers):
    out = {}
    for name, value in headers.items():
        key = name.lower()
        if any(fragment in key for fragment in SECRET_HEADER_FRAGMENTS):
            value = "REDACTED"
        out[key] = value if key not in out else out[key] + ", " + value
    return out


def varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def rpc_status_protobuf(code, message):
    """google.rpc.Status {code = 1; message = 2}, encoded by hand: the proto is not part of opentelemetry-proto."""
    data = message.encode()
    return b"\x08" + varint(code) + b"\x12" + varint(len(data)) + data


class State:
    def __init__(self, ndjson_path, metrics_ndjson_path=None):
        self.lock = threading.Lock()
        self.ndjson_path = ndjson_path
        self.metrics_ndjson_path = metrics_ndjson_path
        self.reset()

    def reset(self):
        self.requests = []
        self.metric_requests = []
        self.attempts = []
        self.failures = []
        self.partials = []

    def add_failures(self, status, count, retry_after, message):
        self.failures.extend([(status, retry_after, message)] * count)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "hostscope-otlp-receiver"
    sys_version = ""

    def log_message(self, format, *args):
        if self.server.verbose:
            sys.stderr.write("%s %s\n" % (self.command, urllib.parse.urlsplit(self.path).path))

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(body)
                body += self.rfile.read(size)
                self.rfile.readline()
                if len(body) > self.server.max_body_bytes:
                    raise OverflowError()
        length = int(self.headers.get("Content-Length") or 0)
        if length > self.server.max_body_bytes:
            raise OverflowError()
        return self.rfile.read(length) if length > 0 else b""

    def send(self, code, content_type, data, extra=()):
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def send_json(self, code, obj):
        self.send(code, "application/json", json.dumps(obj).encode())

    def send_status(self, code, message, protobuf, extra=()):
        grpc = GRPC_CODES.get(code, 2)
        if protobuf:
            self.send(code, "application/x-protobuf", rpc_status_protobuf(grpc, message), extra)
        else:
            self.send(code, "application/json", json.dumps({"code": grpc, "message": message}).encode(), extra)

    def do_GET(self):
        path = urllib.parse.urlsplit(self.path).path
        if path == "/received":
            state = self.server.state
            with state.lock:
                self.send_json(200, {
                    "requests": state.requests,
                    "metric_requests": state.metric_requests,
                    "attempts": state.attempts,
                    "span_count": sum(r["span_count"] for r in state.requests),
                    "data_point_count": sum(r["data_point_count"] for r in state.metric_requests),
                    "rejected_spans": sum(r["rejected_spans"] for r in state.requests),
                    "pending_failures": len(state.failures),
                })
        elif path in ("/v1/traces", "/v1/metrics"):
            self.send_status(405, "use POST for %s" % path, False, [("Allow", "POST")])
        else:
            self.send_json(404, {"error": "no such endpoint: %s" % path})

    def do_POST(self):
        path = urllib.parse.urlsplit(self.path).path
        try:
            body = self.read_body()
        except (OverflowError, ValueError):
            self.close_connection = True
            self.send_status(413, "the body exceeds %d bytes" % self.server.max_body_bytes, False)
            return
        if path == "/v1/traces":
            self.export(body, "traces")
        elif path == "/v1/metrics":
            self.export(body, "metrics")
        elif path.startswith("/control/"):
            self.control(path[len("/control/"):], body)
        else:
            self.send_json(404, {"error": "no such endpoint: %s" % path})

    def control(self, what, body):
        state = self.server.state
        try:
            options = json.loads(body or b"{}")
        except json.JSONDecodeError as exc:
            self.send_json(400, {"error": "control bodies are JSON: %s" % exc})
            return
        with state.lock:
            if what == "fail":
                state.add_failures(int(options.get("status", 503)), int(options.get("count", 1)),
                                   options.get("retry_after"), options.get("message"))
            elif what == "partial":
                state.partials.extend([(int(options.get("rejected_spans", 1)),
                                        options.get("error_message", "rejected by test"))]
                                      * int(options.get("count", 1)))
            elif what == "reset":
                state.reset()
            else:
                self.send_json(404, {"error": "no such control: %s" % what})
                return
        self.send_json(200, {"ok": True})

    def export(self, body, signal):
        state = self.server.state
        content_type = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        protobuf = content_type == "application/x-protobuf"
        headers = redacted_headers(self.headers)
        attempt = {"signal": signal, "content_type": content_type, "traceparent": self.headers.get("traceparent"),
                   "headers": headers, "body_bytes": len(body)}

        with state.lock:
            failure = state.failures.pop(0) if state.failures else None
        if failure is not None:
            status, retry_after, message = failure
            attempt.update(status=status, injected=True)
            with state.lock:
                state.attempts.append(attempt)
            extra = [("Retry-After", str(retry_after))] if retry_after is not None else []
            self.send_status(status, message or "injected %d" % status, protobuf, extra)
            return

        def reject(code, message):
            attempt.update(status=code, injected=False, error=message)
            with state.lock:
                state.attempts.append(attempt)
            self.send_status(code, message, protobuf)

        for name, value in self.server.required_headers:
            if value not in self.headers.get_all(name, []):
                reject(401, "missing or wrong %s header" % name)
                return
        if content_type not in ("application/json", "application/x-protobuf"):
            reject(415, "unsupported Content-Type %r; use application/json or application/x-protobuf"
                   % content_type)
            return
        encoding = self.headers.get("Content-Encoding", "").strip().lower()
        if encoding == "gzip":
            try:
                body = gzip.decompress(body)
            except (OSError, EOFError) as exc:
                reject(400, "the gzip body does not decompress: %s" % exc)
                return
        elif encoding not in ("", "identity"):
            reject(400, "unsupported Content-Encoding %r" % encoding)
            return
        request_type = Request if signal == "traces" else MetricsRequest
        try:
            message = decode_protobuf(body, request_type) if protobuf else decode_json(body, request_type)
        except DecodeFailure as exc:
            reject(400, str(exc))
            return
        if signal == "metrics":
            self.metrics(message, attempt, encoding, protobuf)
            return

        span_count = sum(len(ss.spans) for rs in message.resource_spans for ss in rs.scope_spans)
        with state.lock:
            partial = state.partials.pop(0) if state.partials else None
        rejected, error_message = partial if partial else (0, "")
        record = dict(attempt, status=200, injected=False, span_count=span_count, rejected_spans=rejected,
                      content_encoding=encoding or None, resource_spans=summarize(message))
        with state.lock:
            state.requests.append(record)
            state.attempts.append({k: v for k, v in record.items() if k != "resource_spans"})
            if state.ndjson_path:
                with open(state.ndjson_path, "a", encoding="utf-8") as out:
                    out.write(otlp_json_line(message) + "\n")

        response = Response()
        if partial:
            response.partial_success.rejected_spans = rejected
            response.partial_success.error_message = error_message
        if protobuf:
            self.send(200, "application/x-protobuf", response.SerializeToString())
        else:
            self.send(200, "application/json",
                      json.dumps(json_format.MessageToDict(response), separators=(",", ":")).encode())


    def metrics(self, message, attempt, encoding, protobuf):
        state = self.server.state
        points = sum(len(getattr(m, m.WhichOneof("data")).data_points)
                     for rm in message.resource_metrics for sm in rm.scope_metrics for m in sm.metrics
                     if m.WhichOneof("data"))
        with state.lock:
            partial = state.partials.pop(0) if state.partials else None
        rejected, error_message = partial if partial else (0, "")
        record = dict(attempt, status=200, injected=False, data_point_count=points, rejected_data_points=rejected,
                      content_encoding=encoding or None, resource_metrics=summarize_metrics(message))
        with state.lock:
            state.metric_requests.append(record)
            state.attempts.append({k: v for k, v in record.items() if k != "resource_metrics"})
            if state.metrics_ndjson_path:
                with open(state.metrics_ndjson_path, "a", encoding="utf-8") as out:
                    out.write(json.dumps(json_format.MessageToDict(message, use_integers_for_enums=True),
                                         separators=(",", ":")) + "\n")
        response = MetricsResponse()
        if partial:
            response.partial_success.rejected_data_points = rejected
            response.partial_success.error_message = error_message
        if protobuf:
            self.send(200, "application/x-protobuf", response.SerializeToString())
        else:
            self.send(200, "application/json",
                      json.dumps(json_format.MessageToDict(response), separators=(",", ":")).encode())


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, family, state, max_body_bytes, verbose, required_headers=()):
        self.address_family = family
        self.state = state
        self.required_headers = list(required_headers)
        self.max_body_bytes = max_body_bytes
        self.verbose = verbose
        super().__init__(address, Handler)

    def handle_error(self, request, client_address):
        if self.verbose:
            super().handle_error(request, client_address)


def parse_fail(text):
    parts = text.split(":")
    status = int(parts[0])
    count = int(parts[1]) if len(parts) > 1 and parts[1] else 1
    retry_after = parts[2] if len(parts) > 2 and parts[2] else None
    return status, count, retry_after


def parse_header(text):
    name, separator, value = text.partition("=")
    if not separator or not name:
        raise argparse.ArgumentTypeError("a header is NAME=VALUE")
    return name.strip(), value.strip()


def watch_stdin():
    while sys.stdin.buffer.read(4096):
        pass
    os._exit(0)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1", help="loopback address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to bind; 0 picks a free one (default)")
    parser.add_argument("--ndjson", help="append each accepted trace request to this file as one OTLP/JSON line")
    parser.add_argument("--metrics-ndjson", help="append each accepted metrics request to this file as one JSON line")
    parser.add_argument("--fail", action="append", default=[], type=parse_fail,
                        metavar="STATUS[:COUNT[:RETRY_AFTER]]", help="answer the first requests with STATUS")
    parser.add_argument("--require-header", action="append", default=[], type=parse_header, metavar="NAME=VALUE",
                        help="answer 401 to requests without this exact header value")
    parser.add_argument("--max-body-bytes", type=int, default=20 * 1024 * 1024)
    parser.add_argument("--exit-on-stdin-eof", action="store_true", help="exit when standard input closes")
    parser.add_argument("--verbose", action="store_true", help="log method and path of each request to stderr")
    args = parser.parse_args(argv)

    # The tests stop the receiver by pid with SIGTERM; a parent may have started it with signals blocked.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGINT, lambda *_: sys.exit(0))

    if not ipaddress.ip_address(args.host).is_loopback:
        parser.error("--host must be a loopback address; this receiver is for tests on this machine only")
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    state = State(args.ndjson, args.metrics_ndjson)
    for status, count, retry_after in args.fail:
        state.add_failures(status, count, retry_after, None)
    server = Server((args.host, args.port), family, state, args.max_body_bytes, args.verbose, args.require_header)
    if args.exit_on_stdin_eof:
        threading.Thread(target=watch_stdin, daemon=True).start()
    host = "[%s]" % args.host if ":" in args.host else args.host
    port = server.server_address[1]
    print(json.dumps({"event": "listening", "host": args.host, "port": port,
                      "endpoint": "http://%s:%d/v1/traces" % (host, port)}), flush=True)
    server.serve_forever(poll_interval=0.2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
