// The page's one way to the server: JSON reads with the token in a header, and one event stream read with
// fetch (so the token goes in a header there too, never in a URL), resumed by Last-Event-ID.

const TOKEN_KEY = 'hostscope.token';

/** The server wants a token, or a different one: `message` is its sentence. */
export class AuthError extends Error {}

/** Any other refusal of the API, with its code and sentence. */
export class APIError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

function headers(extra) {
  const result = { Accept: 'application/json', ...extra };
  const value = token();
  if (value) result.Authorization = 'Bearer ' + value;
  return result;
}

/** GET `path` as JSON; throws AuthError on 401 and APIError with the server's sentence otherwise. */
export async function getJSON(path, signal) {
  const response = await send(path, { headers: headers(), signal });
  return response.json();
}

/**
 * POST `body` as JSON to `path` (the chat's turns, stops and re-runs): the token in the header, never a cookie.
 * Returns the response, whose body the caller reads (a stream or JSON); refusals throw as for getJSON.
 */
export async function post(path, body, signal) {
  const extra = { 'Content-Type': 'application/json', Accept: 'text/event-stream, application/json' };
  return send(path, { method: 'POST', headers: headers(extra), body: JSON.stringify(body || {}), signal });
}

async function send(path, options) {
  let response;
  try {
    response = await fetch(path, { ...options, cache: 'no-store', credentials: 'omit' });
  } catch (error) {
    if (error.name === 'AbortError') throw error;
    throw new APIError(0, 'unreachable', 'serve does not answer; is it running?');
  }
  if (response.ok) return response;
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  const refusal = body && body.error;
  if (response.status === 401) throw new AuthError(refusal ? refusal.message : 'this server needs its token');
  throw new APIError(
    response.status,
    refusal ? refusal.code : 'http_' + response.status,
    refusal ? refusal.message : 'serve answered ' + response.status,
  );
}

export function hostPath(host) {
  return '/api/v1/hosts/' + encodeURIComponent(host);
}

/**
 * The live events of `/api/v1/events`, read once for the whole page. Handlers get `(data, id)` per event
 * type; `status` gets `live`, `reconnecting` or `unauthorized`. After a break it reconnects by itself with
 * jittered back-off, sending the last id it saw; the server answers with what was missed, or `reset`.
 * Records come as summaries (`view=summary`: what a fleet row shows, a twentieth of the JSON to parse), except
 * those of the host `focus(host)` names, which come whole for its page.
 */
export class EventFeed {
  constructor() {
    this.handlers = new Map();
    this.lastId = null;
    this.retryMs = 2000;
    this.failures = 0;
    this.controller = null;
    this.running = false;
    this.fullHost = null;
    this.restarting = false;
    this.status = () => {};
  }

  /** Asks for `host`'s records whole (null: none), reconnecting at once from the last id seen. */
  focus(host) {
    const next = host || null;
    if (next === this.fullHost) return;
    this.fullHost = next;
    if (this.running && this.controller) {
      this.restarting = true;
      this.controller.abort();
    }
  }

  on(type, handler) {
    if (!this.handlers.has(type)) this.handlers.set(type, new Set());
    this.handlers.get(type).add(handler);
    return () => this.handlers.get(type).delete(handler);
  }

  emit(type, data, id) {
    for (const handler of this.handlers.get(type) || []) {
      try {
        handler(data, id);
      } catch (error) {
        console.warn('an event handler failed:', error);
      }
    }
  }

  start() {
    if (this.running) return;
    this.running = true;
    this.loop();
  }

  stop() {
    this.running = false;
    if (this.controller) this.controller.abort();
  }

  async loop() {
    while (this.running) {
      this.controller = new AbortController();
      const extra = { Accept: 'text/event-stream' };
      if (this.lastId) extra['Last-Event-ID'] = this.lastId;
      try {
        const full = this.fullHost ? '&full=' + encodeURIComponent(this.fullHost) : '';
        const response = await fetch('/api/v1/events?view=summary' + full, {
          headers: headers(extra),
          signal: this.controller.signal,
          cache: 'no-store',
          credentials: 'omit',
        });
        if (response.status === 401) {
          this.running = false;
          this.status('unauthorized');
          return;
        }
        if (response.ok && response.body) {
          this.failures = 0;
          this.status('live');
          await this.read(response.body);
        }
      } catch {
        // A refused connection or a stream cut by a restart: retried below.
      }
      if (!this.running) return;
      if (this.restarting) {
        this.restarting = false;
        continue;
      }
      this.failures += 1;
      this.status('reconnecting');
      const backoff = Math.min(this.retryMs * 2 ** Math.min(this.failures - 1, 3), 15000);
      await new Promise((resolve) => setTimeout(resolve, backoff * (0.5 + Math.random() / 2)));
    }
  }

  /** Reads the stream's events, keeping the last id and the server's retry interval. */
  async read(body) {
    await readEvents(
      body,
      (type, data, id) => {
        if (id !== null) this.lastId = id;
        if (data !== null) this.emit(type, data, id);
      },
      (ms) => {
        this.retryMs = ms;
      },
    );
  }
}

/**
 * Reads a server-sent-events body as the format has it (`id`, `event`, `data`, `retry`): `onEvent(type, data, id)`
 * for each event, `data` parsed as JSON (null when absent or not JSON), `onRetry(ms)` for a retry field.
 */
export async function readEvents(body, onEvent, onRetry = () => {}) {
  let type = 'message';
  let data = [];
  let id = null;
  await readLines(body, (line) => {
    if (line === '') {
      let parsed = null;
      if (data.length) {
        try {
          parsed = JSON.parse(data.join('\n'));
        } catch {
          parsed = null;
        }
      }
      onEvent(type, parsed, id);
      type = 'message';
      data = [];
      id = null;
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let text = colon < 0 ? '' : line.slice(colon + 1);
    if (text.startsWith(' ')) text = text.slice(1);
    if (field === 'event') type = text;
    else if (field === 'data') data.push(text);
    else if (field === 'id') id = text;
    else if (field === 'retry' && /^\d+$/.test(text)) onRetry(Number(text));
  });
}

/** Hands each line of a streamed body to `onLine` (without its `\n` or `\r\n`) as it arrives. */
export async function readLines(body, onLine) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + 1);
      onLine(line.endsWith('\r') ? line.slice(0, -1) : line);
    }
  }
}

/** GET `path` as a stream (a download, a live tail), the token in a header; refusals as in getJSON. */
export async function getStream(path, signal) {
  const response = await fetch(path, { headers: headers({ Accept: '*/*' }), signal, cache: 'no-store', credentials: 'omit' });
  if (response.ok) return response;
  let refusal = null;
  try {
    refusal = (await response.json()).error;
  } catch {
    refusal = null;
  }
  if (response.status === 401) throw new AuthError(refusal ? refusal.message : 'this server needs its token');
  throw new APIError(response.status, refusal ? refusal.code : 'http_' + response.status, refusal ? refusal.message : 'serve answered ' + response.status);
}
