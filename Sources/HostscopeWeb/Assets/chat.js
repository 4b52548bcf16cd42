// The Chat screen (`#/chat`, `#/chat/ID?host=NAME`): the streamed Markdown answer beside the tool timeline
// (running/ok/error, duration, exit code), an inspector with a call's input and output and a re-run, tokens, cost
// and time, stop; each row opens its span in Tracing; earlier conversations listed and resumed. Turns are POSTed
// with the token in a header; the provider and its key stay on the server.

import { APIError, AuthError, getJSON, post, readEvents } from './api.js';
import { el, route, setText } from './dom.js';
import * as f from './format.js';
import { parseMarkdown } from './markdown.js';

export function mount(root, context, conversationId) {
  const abort = new AbortController();
  const state = { id: conversationId || null, calls: new Map(), selected: null, turn: null, usage: { input: 0, output: 0, cost: null } };
  const hostSelect = el('select', { id: 'chat-host', 'aria-label': 'Host' });
  const config = el('span', { class: 'note', id: 'chat-config' });
  const list = el('ul', { id: 'conversations', class: 'conversations' });
  const transcript = el('div', { id: 'transcript', class: 'transcript', 'aria-live': 'polite' });
  const input = el('textarea', { id: 'chat-input', rows: 3, 'aria-label': 'Question', placeholder: 'Ask about the host…', required: true });
  const sendButton = el('button', { type: 'submit', id: 'chat-send', text: 'Send' });
  const stopButton = el('button', { type: 'button', id: 'chat-stop', text: 'Stop', disabled: true });
  const problem = el('p', { id: 'chat-error', class: 'error', role: 'alert' });
  const telemetry = el('p', { id: 'chat-telemetry', class: 'note' });
  const rows = el('tbody');
  const inspector = el('div', { id: 'inspector', class: 'span-detail' }, el('p', { class: 'note', text: 'Choose a tool call to see its input and output.' }));
  const form = el('form', { id: 'chat-form', class: 'chat-form' }, input, el('div', { class: 'toolbar' }, sendButton, stopButton, telemetry));
  root.append(
    el('div', { class: 'toolbar' },
      el('h1', { text: 'Chat' }),
      el('label', { for: 'chat-host', text: 'Host' }), hostSelect,
      el('a', { href: route('chat'), id: 'chat-new', text: 'New conversation' }),
      config),
    el('div', { class: 'chat' },
      el('aside', {}, el('h2', { text: 'Conversations' }), list),
      el('section', { class: 'chat-main' }, transcript, problem, form),
      el('section', {},
        el('h2', { text: 'Tools' }),
        el('div', { class: 'scroll' },
          el('table', { id: 'timeline' },
            el('thead', {}, el('tr', {}, ['#', 'Tool', 'Status', 'Time', 'Exit', 'Span'].map((title) => el('th', { scope: 'col', text: title })))),
            rows)),
        inspector)),
  );

  function fail(error, node = problem) {
    if (error.name === 'AbortError') return;
    if (error instanceof AuthError) context.unauthorized(error.message);
    else setText(node, error instanceof APIError ? error.message : String(error));
  }

  function showTelemetry(milliseconds) {
    const { input: tokensIn, output: tokensOut, cost } = state.usage;
    const parts = ['Tokens ' + tokensIn + ' in / ' + tokensOut + ' out', 'cost ' + (cost == null ? '–' : '$' + cost.toFixed(4))];
    if (milliseconds != null) parts.push(f.milliseconds(milliseconds));
    setText(telemetry, parts.join(' · '));
  }

  function setRunning(running) {
    sendButton.disabled = running;
    stopButton.disabled = !running;
    hostSelect.disabled = running || Boolean(state.id);
    document.body.dataset.chat = running ? 'running' : 'idle';
  }

  // The timeline: one row per tool call, updated in place.
  function callRow(call) {
    let entry = state.calls.get(call.id);
    if (!entry) {
      const cells = { number: el('td'), name: el('td'), status: el('td', { class: 'state' }), time: el('td'), exit: el('td'), span: el('td') };
      const row = el('tr', { tabindex: 0, 'data-call': call.id }, Object.values(cells));
      row.addEventListener('click', (event) => {
        if (!event.target.closest('a')) select(call.id);
      });
      row.addEventListener('keydown', (event) => {
        if (event.key === 'Enter') select(call.id);
      });
      entry = { call: {}, row, cells };
      state.calls.set(call.id, entry);
      setText(cells.number, state.calls.size);
      rows.append(row);
    }
    Object.assign(entry.call, Object.fromEntries(Object.entries(call).filter(([, value]) => value !== undefined)));
    const shown = entry.call;
    entry.row.dataset.status = shown.status;
    setText(entry.cells.name, shown.name);
    setText(entry.cells.status, shown.status);
    setText(entry.cells.time, shown.duration_ms == null ? '' : f.milliseconds(shown.duration_ms));
    setText(entry.cells.exit, shown.exit_code ?? '');
    if (shown.trace_id && shown.span_id && !entry.cells.span.firstChild) {
      entry.cells.span.append(el('a', { href: spanLink(shown), class: 'span-link', text: shown.span_id.slice(0, 8) }));
    }
    if (state.selected === call.id) select(call.id);
    return entry;
  }

  function select(id) {
    state.selected = id;
    for (const entry of state.calls.values()) entry.row.classList.toggle('selected', entry.call.id === id);
    const call = state.calls.get(id).call;
    const rerun = el('button', { type: 'button', id: 'rerun', text: 'Re-run', disabled: !state.id || call.status === 'running' || call.runs_remotely });
    const rerunResult = el('div', { id: 'rerun-result' });
    rerun.addEventListener('click', () => rerunCall(call, rerun, rerunResult));
    inspector.replaceChildren(
      el('h2', { text: '#' + (Array.from(state.calls.keys()).indexOf(id) + 1) + ' ' + call.name }),
      el('dl', { class: 'facts' },
        el('dt', { text: 'status' }), el('dd', { text: call.status }),
        el('dt', { text: 'duration' }), el('dd', { text: call.duration_ms == null ? '–' : f.milliseconds(call.duration_ms) }),
        el('dt', { text: 'exit code' }), el('dd', { text: call.exit_code ?? '–' }),
        el('dt', { text: 'span' }), el('dd', {}, call.span_id ? el('a', { href: spanLink(call), text: 'open in Tracing' }) : '–')),
      el('h3', { text: 'Input' }),
      el('pre', { class: 'tool-text', text: JSON.stringify(call.input ?? {}, null, 2) }),
      el('h3', { text: 'Output' }),
      el('pre', { class: 'tool-text', id: 'tool-output', text: call.output ?? '' }),
      rerun,
      rerunResult,
    );
  }

  async function rerunCall(call, button, target) {
    button.disabled = true;
    setText(target, 'Running ' + call.name + ' again…');
    try {
      const response = await post('/api/v1/chat/conversations/' + encodeURIComponent(state.id) + '/calls/' + encodeURIComponent(call.id) + '/rerun', {}, abort.signal);
      const result = await response.json();
      target.replaceChildren(
        el('h3', { text: 'Re-run: ' + (result.is_error ? 'error' : 'ok') + ' in ' + f.milliseconds(result.duration_ms) }),
        result.span_id ? el('a', { href: spanLink(result), text: 'its span in Tracing' }) : '',
        el('pre', { class: 'tool-text', text: result.output }),
      );
    } catch (error) {
      fail(error, target);
    } finally {
      button.disabled = false;
    }
  }

  // The transcript: questions as text, answers as Markdown built into nodes.
  function message(role, text) {
    const body = el('div', { class: 'message-body' });
    const node = el('article', { class: 'message ' + role, 'data-role': role }, el('h3', { text: role === 'user' ? 'You' : 'Assistant' }), body);
    transcript.append(node);
    if (role === 'user') body.append(el('p', { text }));
    else renderMarkdown(body, text);
    return { node, body };
  }

  async function loadConversation() {
    if (!state.id) return;
    try {
      const stored = await getJSON('/api/v1/chat/conversations/' + encodeURIComponent(state.id), abort.signal);
      state.id = stored.session.id;
      setHost(stored.session.host);
      for (const item of stored.messages) {
        if (item.role === 'user') message('user', item.content);
        else if (item.role === 'assistant' && item.content) message('assistant', item.content);
      }
      for (const call of stored.tool_calls) callRow(call);
      state.usage = { input: stored.session.input_tokens, output: stored.session.output_tokens, cost: stored.session.cost_usd };
      showTelemetry(null);
      const last = stored.turns[stored.turns.length - 1];
      if (last && last.error_message) setText(problem, last.error_message);
    } catch (error) {
      fail(error);
    }
  }

  function setHost(name) {
    if (![...hostSelect.options].some((option) => option.value === name)) hostSelect.append(el('option', { value: name, text: name }));
    hostSelect.value = name;
    hostSelect.disabled = true;
  }

  async function loadList() {
    try {
      const answer = await getJSON('/api/v1/chat/conversations?limit=50', abort.signal);
      list.replaceChildren(
        ...answer.conversations.map((item) =>
          el('li', { 'aria-current': item.id === state.id ? 'true' : null },
            el('a', { href: route('chat', item.id), text: item.title || item.id }),
            el('span', { class: 'note', text: ' ' + item.host + ' · ' + item.turns + ' turn' + (item.turns === 1 ? '' : 's') + (item.running ? ' · running' : '') }))),
      );
      if (!answer.conversations.length) list.append(el('li', { class: 'note', text: 'No conversation yet.' }));
    } catch (error) {
      fail(error);
    }
  }

  async function send(text) {
    const controller = new AbortController();
    abort.signal.addEventListener('abort', () => controller.abort(), { once: true });
    state.turn = controller;
    setRunning(true);
    setText(problem, '');
    message('user', text);
    const answer = message('assistant', '');
    let markdown = '';
    let pending = false;
    const started = performance.now();
    const draw = () => {
      pending = false;
      renderMarkdown(answer.body, markdown);
    };
    const handle = (event) => {
      switch (event.type) {
        case 'conversation':
          if (!state.id) {
            state.id = event.id;
            history.replaceState(null, '', route('chat', event.id));
          }
          break;
        case 'text':
          markdown += event.delta;
          if (!pending) {
            pending = true;
            requestAnimationFrame(draw);
          }
          break;
        case 'tool_call':
          callRow({ ...event, status: 'running' });
          break;
        case 'tool_result':
          callRow({ ...event, status: event.is_error ? 'error' : 'ok' });
          break;
        case 'usage':
          state.usage.input += event.input_tokens;
          state.usage.output += event.output_tokens;
          if (event.cost_usd != null) state.usage.cost = (state.usage.cost ?? 0) + event.cost_usd;
          showTelemetry(performance.now() - started);
          break;
        case 'error': {
          const wait = event.retry_after_s ? ' (try again in ' + event.retry_after_s + ' s)' : '';
          answer.node.append(el('p', { class: 'error turn-error', role: 'alert', text: event.message + wait }));
          break;
        }
        case 'done':
          answer.node.dataset.finish = event.finish_reason;
          if (event.finish_reason === 'stopped') answer.node.append(el('p', { class: 'note', text: 'Stopped; the answer so far is kept.' }));
          break;
      }
    };
    try {
      const body = { message: text, conversation: state.id || undefined, host: state.id ? undefined : hostSelect.value };
      const response = await post('/api/v1/chat/turns', body, controller.signal);
      await readEvents(response.body, (_type, data) => {
        if (data) handle(data);
      });
    } catch (error) {
      if (error.name !== 'AbortError') {
        answer.node.remove();
        fail(error);
        input.value = input.value || text;
      }
    } finally {
      draw();
      showTelemetry(performance.now() - started);
      state.turn = null;
      setRunning(false);
      loadList();
    }
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text || state.turn) return;
    input.value = '';
    send(text);
  });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) form.requestSubmit();
  });
  stopButton.addEventListener('click', async () => {
    if (!state.turn) return;
    if (!state.id) {
      state.turn.abort();
      return;
    }
    try {
      await post('/api/v1/chat/conversations/' + encodeURIComponent(state.id) + '/stop', {}, abort.signal);
    } catch (error) {
      fail(error);
    }
  });

  async function start() {
    try {
      const chat = await getJSON('/api/v1/chat', abort.signal);
      setText(config, chat.provider + ' · ' + chat.model);
    } catch (error) {
      fail(error);
      sendButton.disabled = true;
    }
    try {
      const answer = await getJSON('/api/v1/hosts', abort.signal);
      const wanted = context.params.get('host');
      hostSelect.replaceChildren(...answer.hosts.map((item) => el('option', { value: item.host, text: item.host, selected: item.host === wanted })));
    } catch (error) {
      fail(error);
    }
    setRunning(false);
    await loadConversation();
    showTelemetry(null);
    loadList();
    input.focus();
  }
  start();
  return () => abort.abort();
}

function spanLink(call) {
  return route('trace', call.trace_id) + '?span=' + encodeURIComponent(call.span_id);
}

/** Replaces `node`'s children with the Markdown `text` as elements; every piece of text stays text. */
export function renderMarkdown(node, text) {
  node.replaceChildren(...parseMarkdown(text).map(block));
}

function block(item) {
  switch (item.type) {
    case 'h':
      return el('h' + Math.min(item.level + 2, 6), {}, item.inline.map(inline));
    case 'code':
      return el('pre', {}, el('code', { text: item.text }));
    case 'ul':
    case 'ol':
      return el(item.type, { start: item.type === 'ol' && item.start !== 1 ? item.start : null }, item.items.map((parts) => el('li', {}, parts.map(inline))));
    default:
      return el('p', {}, item.inline.map(inline));
  }
}

function inline(part) {
  switch (part.type) {
    case 'code':
      return el('code', { text: part.text });
    case 'strong':
      return el('strong', {}, part.children.map(inline));
    case 'em':
      return el('em', {}, part.children.map(inline));
    case 'link':
      if (part.href) return el('a', { href: part.href, rel: 'noopener noreferrer', target: '_blank' }, part.children.map(inline));
      return el('span', { class: 'link-text' }, part.children.map(inline), ' (' + part.target + ')');
    default:
      return document.createTextNode(part.text);
  }
}
