// The Tracing screen: stored spans with filters (`#/tracing?kind=ssh&status=error`), and one trace as a
// waterfall with the detail of a chosen span (`#/trace/ID?span=ID`).

import { APIError, AuthError, getJSON } from './api.js';
import { download, el, route, setText } from './dom.js';
import * as f from './format.js';

const KINDS = ['', 'snapshot', 'ssh', 'sftp', 'http', 'chat', 'tool', 'exec', 'other'];

export function mount(root, context, traceId) {
  const abort = new AbortController();
  if (traceId) showTrace(root, context, traceId, abort.signal);
  else showList(root, context, abort.signal);
  return () => abort.abort();
}

function fail(context, node, error) {
  if (error.name === 'AbortError') return;
  if (error instanceof AuthError) context.unauthorized(error.message);
  else setText(node, error instanceof APIError ? error.message : String(error));
}

function showList(root, context, signal) {
  const params = context.params;
  const fields = {
    host: el('input', { type: 'search', placeholder: 'host', value: params.get('host') || '', 'aria-label': 'Host', 'data-filter': true }),
    name: el('input', { type: 'search', placeholder: 'name starts with', value: params.get('name') || '', 'aria-label': 'Name' }),
    kind: el('select', { 'aria-label': 'Kind' }, KINDS.map((kind) => el('option', { value: kind, selected: kind === (params.get('kind') || ''), text: kind || 'any kind' }))),
    status: el('select', { 'aria-label': 'Status' }, ['any', 'error'].map((status) => el('option', { value: status, selected: status === (params.get('status') || 'any'), text: status === 'any' ? 'any status' : 'errors only' }))),
    since: el('select', { 'aria-label': 'Since' }, ['15m', '1h', '24h', '7d'].map((since) => el('option', { value: since, selected: since === (params.get('since') || '1h'), text: 'last ' + since }))),
  };
  const note = el('p', { class: 'note' });
  const body = el('tbody');
  const form = el('form', { class: 'toolbar' }, el('h1', { text: 'Tracing' }), Object.values(fields), el('button', { type: 'submit', text: 'Filter' }));
  root.append(
    form,
    note,
    el('div', { class: 'scroll' },
      el('table', { id: 'spans' },
        el('thead', {}, el('tr', {}, ['Start', 'Name', 'Host', 'Kind', 'Status', 'Duration'].map((title) => el('th', { scope: 'col', text: title })))),
        body)),
  );
  async function load() {
    const query = new URLSearchParams({ limit: '200' });
    for (const [key, input] of Object.entries(fields)) if (input.value && input.value !== 'any') query.set(key, input.value.trim());
    context.setParams(query);
    setText(note, 'Reading spans…');
    try {
      const answer = await getJSON('/api/v1/spans?' + query, signal);
      body.replaceChildren(
        ...answer.spans.map((span) =>
          el('tr', { 'data-status': statusCode(span) },
            el('td', { text: f.time(new Date(span.start)) }),
            el('td', {}, el('a', { href: route('trace', span.trace_id) + '?span=' + encodeURIComponent(span.span_id), text: span.name })),
            el('td', { text: attribute(span, 'host.name') ?? attribute(span, 'hostscope.host') ?? '' }),
            el('td', { text: span.kind ?? '' }),
            el('td', { text: statusCode(span) }),
            el('td', { text: f.milliseconds(span.duration_ms) }),
          ),
        ),
      );
      setText(note, answer.spans.length ? answer.spans.length + ' spans, newest first' : 'No stored span matches.');
    } catch (error) {
      fail(context, note, error);
    }
  }
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    load();
  });
  load();
}

function statusCode(span) {
  const status = span.status;
  if (status == null) return 'unset';
  if (typeof status === 'string') return status;
  return status.code ?? 'unset';
}

/** The attributes of a span as [key, value] pairs, whether stored as an object or an OTLP list. */
function attributes(span) {
  const value = span.attributes;
  if (!value) return [];
  if (Array.isArray(value)) return value.map((item) => [item.key, item.value && typeof item.value === 'object' ? Object.values(item.value)[0] : item.value]);
  return Object.entries(value);
}

function attribute(span, key) {
  const found = attributes(span).find(([name]) => name === key);
  return found ? String(found[1]) : null;
}

function showTrace(root, context, traceId, signal) {
  const note = el('p', { class: 'note' });
  const waterfall = el('div', { class: 'waterfall', id: 'waterfall' });
  const detail = el('section', { class: 'span-detail', id: 'span-detail' });
  let spans = [];
  root.append(
    el('div', { class: 'toolbar' }, el('a', { href: '#/tracing', class: 'back', text: '← Spans' }), el('h1', { text: 'Trace ' + traceId }),
      el('button', { type: 'button', text: 'Export OTLP lines', onclick: () => download(traceId + '.ndjson', 'application/x-ndjson', spans.map((span) => JSON.stringify(span)).join('\n') + '\n') })),
    note,
    el('div', { class: 'columns' }, waterfall, detail),
  );

  function select(span) {
    const params = new URLSearchParams({ span: span.span_id });
    context.setParams(params);
    for (const row of waterfall.children) row.classList.toggle('selected', row.dataset.span === span.span_id);
    const parent = spans.find((other) => other.span_id === span.parent_span_id);
    const children = spans.filter((other) => other.parent_span_id === span.span_id);
    detail.replaceChildren(
      el('h2', { text: span.name }),
      el('dl', { class: 'facts' },
        [['status', statusCode(span) + (span.status?.message ? ': ' + span.status.message : '')], ['kind', span.kind], ['start', span.start], ['duration', f.milliseconds(span.duration_ms)], ['span id', span.span_id], ['parent', parent ? parent.name : span.parent_span_id || '(root)']]
          .flatMap(([name, value]) => [el('dt', { text: name }), el('dd', { text: value ?? '' })])),
      el('h3', { text: 'Attributes' }),
      el('dl', { class: 'facts' }, attributes(span).flatMap(([name, value]) => [el('dt', { text: name }), el('dd', { text: typeof value === 'object' ? JSON.stringify(value) : String(value) })])),
      el('h3', { text: 'Events' }),
      el('ul', {}, (span.events || []).map((event) => el('li', { text: (event.name ?? '') + ' ' + (event.time ?? event.timestamp ?? '') + ' ' + (event.attributes ? JSON.stringify(event.attributes) : '') }))),
      children.length ? el('h3', { text: 'Children' }) : null,
      children.length ? el('ul', {}, children.map((child) => el('li', {}, el('button', { type: 'button', class: 'link', text: child.name, onclick: () => select(child) })))) : null,
    );
  }

  (async () => {
    try {
      const answer = await getJSON('/api/v1/traces/' + encodeURIComponent(traceId), signal);
      spans = answer.spans;
    } catch (error) {
      return fail(context, note, error);
    }
    const starts = spans.map((span) => Date.parse(span.start));
    const ends = spans.map((span) => Date.parse(span.end));
    const first = Math.min(...starts);
    const total = Math.max(1, Math.max(...ends) - first);
    const byParent = new Map();
    for (const span of spans) {
      const key = spans.some((other) => other.span_id === span.parent_span_id) ? span.parent_span_id : '';
      if (!byParent.has(key)) byParent.set(key, []);
      byParent.get(key).push(span);
    }
    const ordered = [];
    const walk = (key, depth) => {
      for (const span of (byParent.get(key) || []).sort((a, b) => Date.parse(a.start) - Date.parse(b.start))) {
        ordered.push([span, depth]);
        walk(span.span_id, depth + 1);
      }
    };
    walk('', 0);
    waterfall.replaceChildren(
      ...ordered.map(([span, depth]) => {
        const bar = el('span', { class: 'span-bar', 'data-status': statusCode(span) });
        bar.style.marginLeft = ((Date.parse(span.start) - first) / total) * 100 + '%';
        bar.style.width = Math.max(0.5, ((Date.parse(span.end) - Date.parse(span.start)) / total) * 100) + '%';
        const label = el('button', { type: 'button', class: 'span-name', text: span.name, onclick: () => select(span) });
        label.style.paddingLeft = depth * 12 + 'px';
        return el('div', { class: 'span-row', 'data-span': span.span_id }, label, el('span', { class: 'track' }, bar), el('span', { class: 'ms', text: f.milliseconds(span.duration_ms) }));
      }),
    );
    setText(note, spans.length + ' spans over ' + f.milliseconds(total));
    const wanted = spans.find((span) => span.span_id === context.params.get('span')) || ordered[0]?.[0];
    if (wanted) select(wanted);
  })();
}
