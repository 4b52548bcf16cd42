// The page: the token gate, the hash router (a URL for every screen and selection), the theme, and the one
// event stream that every screen listens to.

import { AuthError, EventFeed, getJSON, setToken, token } from './api.js';
import { el } from './dom.js';
import * as files from './files.js';
import * as fleet from './fleet.js';
import * as host from './host.js';
import * as tracing from './tracing.js';
import * as chat from './chat.js';

const main = document.getElementById('main');
const statusLine = document.getElementById('status');
const feed = new EventFeed();
let mounted = null;

/**
 * The screen a hash names: `#/`, `#/host/NAME?range=1h`, `#/tracing?kind=ssh`, `#/trace/ID?span=ID`,
 * `#/files/HOST?path=/srv/log.txt&line=12`.
 */
function parseRoute() {
  const hash = location.hash.replace(/^#\/?/, '');
  const [path, query] = hash.split('?', 2);
  const parts = path.split('/').filter(Boolean).map((part) => {
    try {
      return decodeURIComponent(part);
    } catch {
      return part;
    }
  });
  return { parts, params: new URLSearchParams(query || '') };
}

/** Replaces the current URL's query without adding a history entry (filters, sort, range). */
export function setParams(params) {
  const hash = location.hash.split('?', 1)[0] || '#/';
  const query = params.toString();
  history.replaceState(null, '', hash + (query ? '?' + query : ''));
}

function show() {
  if (mounted) mounted();
  mounted = null;
  main.replaceChildren();
  const { parts, params } = parseRoute();
  const context = { feed, params, setParams, unauthorized, takeInitialHosts };
  let screen = fleet;
  let argument = null;
  if (parts[0] === 'host' && parts[1]) [screen, argument] = [host, parts[1]];
  else if (parts[0] === 'tracing') screen = tracing;
  else if (parts[0] === 'trace' && parts[1]) [screen, argument] = [tracing, parts[1]];
  else if (parts[0] === 'chat') [screen, argument] = [chat, parts[1] || null];
  else if (parts[0] === 'files') [screen, argument] = [files, parts[1] || ''];
  document.getElementById('nav-fleet').toggleAttribute('aria-current', screen === fleet || screen === host);
  document.getElementById('nav-chat').toggleAttribute('aria-current', screen === chat);
  document.getElementById('nav-files').toggleAttribute('aria-current', screen === files);
  // Back to the Files screen as it was left: the same tree, folders and file.
  document.getElementById('nav-files').setAttribute('href', screen === files ? '#/files' : files.lastLink());
  document.getElementById('nav-tracing').toggleAttribute('aria-current', screen === tracing);
  mounted = screen.mount(main, context, argument) || null;
}

/** The token form: asked once per tab (kept in sessionStorage, sent as a bearer header only). */
function unauthorized(message) {
  feed.stop();
  if (mounted) mounted();
  mounted = null;
  const hadToken = Boolean(token());
  const input = el('input', {
    type: 'password',
    id: 'token',
    name: 'token',
    autocomplete: 'current-password',
    required: true,
    'aria-label': 'Token',
  });
  const form = el(
    'form',
    { class: 'token-form', id: 'token-form' },
    el('h1', { text: hadToken ? 'Wrong token' : 'This serve needs its token' }),
    el('p', {
      class: hadToken ? 'error' : 'note',
      text: hadToken
        ? 'serve refused the token given: ' + message + '. Enter the content of serve\'s --token-file again.'
        : 'Enter the content of serve\'s --token-file. It stays in this tab only and is sent in a header, never in a URL.',
    }),
    el('label', { for: 'token', text: 'Token' }),
    input,
    el('button', { type: 'submit', text: 'Open the dashboard' }),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    setToken(input.value.trim());
    start();
  });
  setToken(null);
  main.replaceChildren(form);
  statusLine.textContent = '';
  input.focus();
}

/** The host list read at start, given once to the first screen that wants it while it is fresh. */
let initialHosts = null;
let initialHostsAt = 0;

function takeInitialHosts() {
  const hosts = performance.now() - initialHostsAt < 5000 ? initialHosts : null;
  initialHosts = null;
  return hosts;
}

async function start() {
  try {
    // The fleet's summary list tells whether the token is taken; the fleet screen shows it without asking again.
    initialHosts = await getJSON('/api/v1/hosts?view=summary');
    initialHostsAt = performance.now();
  } catch (error) {
    if (error instanceof AuthError) {
      unauthorized(error.message);
      return;
    }
  }
  feed.start();
  show();
}

feed.status = (state) => {
  if (state === 'unauthorized') {
    unauthorized('the event stream was refused');
    return;
  }
  statusLine.textContent = state === 'live' ? '● live' : '○ reconnecting…';
  statusLine.className = 'status ' + state;
  document.body.dataset.feed = state;
};

function applyTheme(theme) {
  document.documentElement.dataset.theme =
    theme || (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light');
}

document.getElementById('theme').addEventListener('click', () => {
  const next = document.documentElement.dataset.theme === 'dark' ? 'light' : 'dark';
  localStorage.setItem('hostscope.theme', next);
  applyTheme(next);
});
applyTheme(localStorage.getItem('hostscope.theme'));

window.addEventListener('hashchange', () => {
  if (!document.getElementById('token-form')) show();
});
document.addEventListener('keydown', (event) => {
  if (event.target.closest('input, select, textarea') || event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.key === 'g') location.hash = '#/';
  else if (event.key === 't') location.hash = '#/tracing';
  else if (event.key === 'c') location.hash = '#/chat';
  else if (event.key === '/') {
    const filter = document.querySelector('[data-filter]');
    if (filter) {
      event.preventDefault();
      filter.focus();
    }
  }
});
start();
