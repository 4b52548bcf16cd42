// The Fleet screen: a row per host, live. Events only mark rows dirty; a frame at most every FLUSH_MS renders
// the changed rows on screen (text set only where it changed) and stops when its budget is spent: the rows left
// are rendered in the frames after, so a burst of 300 records never makes one long frame. A row off screen is
// not touched until it scrolls into view. Each frame that changes the table costs the browser a paint and a
// layerization of the whole page (several ms for 300 rows, whatever the rows changed), and each row changed off
// screen about half a millisecond more: records trickling in all through a tick must not each have a frame.

import { APIError, getJSON, AuthError } from './api.js';
import { el, route, setText } from './dom.js';
import * as f from './format.js';
import { sparkline, themeColor } from './chart.js';
import { mountAlerts } from './alerts.js';

/** Filesystems that are not storage (kernel, memory, container layers): never "the fullest". */
const PSEUDO = /^(tmpfs|devtmpfs|devfs|proc|sysfs|overlay|squashfs|cgroup2?|nsfs|autofs|efivarfs|ramfs|fuse\..*)$/;

export function realFilesystems(record) {
  return (record.disks || []).filter(
    (disk) =>
      disk.size_bytes > 0 &&
      !PSEUDO.test(disk.type || '') &&
      !/^(\/dev|\/run|\/sys|\/proc)(\/|$)/.test(disk.mount || '') &&
      !/^(tmpfs|devtmpfs|devfs|overlay|none)$/.test(disk.filesystem || ''),
  );
}

/** A record's figures as the fleet shows them; `null` where the host did not give one. */
export function figures(record) {
  if (!record || record.error) return null;
  const sum = (items, key) =>
    items.reduce((total, item) => (item[key] == null ? total : (total ?? 0) + item[key]), null);
  const interfaces = (record.network || []).filter((item) => !/^lo\d*$/.test(item.interface));
  const filesystems = realFilesystems(record);
  const fullest = filesystems.reduce((best, disk) => (best && best.used_percent >= disk.used_percent ? best : disk), null);
  const cores = record.cpu && record.cpu.cores;
  const load = record.load && record.load['1m'];
  const rx = sum(interfaces, 'rx_bytes_per_second');
  const tx = sum(interfaces, 'tx_bytes_per_second');
  const read = sum(record.disks || [], 'read_bytes_per_second');
  const write = sum(record.disks || [], 'write_bytes_per_second');
  return {
    cpu: record.cpu ? record.cpu.busy_percent : null,
    memory: record.memory ? record.memory.used_percent : null,
    fullest: fullest ? fullest.used_percent : null,
    fullestMount: fullest ? fullest.mount : '',
    net: rx == null && tx == null ? null : (rx || 0) + (tx || 0),
    rx,
    tx,
    disk: read == null && write == null ? null : (read || 0) + (write || 0),
    read,
    write,
    loadPerCore: load != null && cores ? load / cores : null,
    uptime: record.uptime_seconds,
  };
}

const COLUMNS = [
  ['host', 'Host', (row) => row.host],
  ['state', 'State', (row) => ['failing', 'waiting', 'connecting', 'ok'].indexOf(row.state.state)],
  ['cpu', 'CPU', (row) => row.figures?.cpu],
  ['memory', 'Memory', (row) => row.figures?.memory],
  ['fullest', 'Fullest FS', (row) => row.figures?.fullest],
  ['net', 'Network', (row) => row.figures?.net],
  ['disk', 'Disk I/O', (row) => row.figures?.disk],
  ['load', 'Load/core', (row) => row.figures?.loadPerCore],
  ['uptime', 'Uptime', (row) => row.figures?.uptime],
  ['age', 'Age', (row) => row.lastTick],
];
const SPARK_POINTS = 240;
/** Columns whose text changes with every record. */
const LIVE = new Set(['cpu', 'memory', 'fullest', 'net', 'disk', 'load', 'uptime', 'age']);

/** Script time a frame may spend on rows; what is left waits for the next frame (a frame is 16 ms at 60 Hz). */
export const FRAME_BUDGET_MS = 8;
/** Live records are rendered together at most this often (clicks, filters and a burst's remaining rows at once). */
export const FLUSH_MS = 250;
/** Live figures re-sort the table at most this often (a click, a filter or a new host at once). */
const REORDER_EVERY_MS = 1000;

/**
 * Main-thread milliseconds of the latest frames that rendered the fleet (at most 256), read by Scripts/bench/web
 * and the browser test: from the frame's render to the first task after that frame, so its script, style, layout
 * and paint. `hostscopeFleetRenderScriptTimes` holds the script part alone, `hostscopeFleetRenderRows` the rows
 * each frame rendered.
 */
const renderTimes = [];
const renderScriptTimes = [];
const renderRows = [];
globalThis.hostscopeFleetRenderTimes = renderTimes;
globalThis.hostscopeFleetRenderScriptTimes = renderScriptTimes;
globalThis.hostscopeFleetRenderRows = renderRows;

function keepLast(list, value) {
  list.push(value);
  if (list.length > 256) list.shift();
}

// A message posted during a frame is delivered in the first task after the frame's style, layout and paint.
// Made at the first frame (an open port would keep a module test's process alive).
let afterFrame = null;
let framesWaiting = [];

function measureAfterFrame(started) {
  if (!afterFrame) {
    afterFrame = new MessageChannel();
    afterFrame.port1.onmessage = () => {
      const now = performance.now();
      for (const start of framesWaiting) keepLast(renderTimes, now - start);
      framesWaiting = [];
    };
  }
  framesWaiting.push(started);
  afterFrame.port2.postMessage(0);
}

export function mount(root, context) {
  const rows = new Map();
  const dirty = new Set();
  let frame = 0;
  let flushTimer = 0;
  let flushedAt = -Infinity;
  let agesAt = 0;
  let reorder = true;
  let reorderNow = true;
  let reorderedAt = 0;
  let reorderTimer = 0;
  let sortKey = context.params.get('sort') || 'host';
  let descending = context.params.get('dir') === 'desc';
  let query = context.params.get('q') || '';
  let stateFilter = context.params.get('state') || '';
  const abort = new AbortController();

  const count = el('span', { class: 'count' });
  const filter = el('input', {
    type: 'search',
    placeholder: 'Filter: name or pattern (web-*)',
    value: query,
    'aria-label': 'Filter hosts by name or pattern',
    'data-filter': true,
  });
  const states = el(
    'select',
    { 'aria-label': 'Filter hosts by state' },
    ['', 'ok', 'failing', 'waiting', 'connecting'].map((state) =>
      el('option', { value: state, selected: state === stateFilter, text: state || 'any state' }),
    ),
  );
  const heads = COLUMNS.map(([key, title]) =>
    el('th', { scope: 'col', 'data-key': key, class: 'c-' + key }, el('button', { type: 'button', text: title, class: 'sort' })),
  );
  const body = el('tbody');
  const message = el('p', { class: 'note' });
  root.append(el('div', { class: 'toolbar' }, el('h1', { text: 'Fleet' }), filter, states, count));
  const unmountAlerts = mountAlerts(root, context);
  root.append(
    message,
    el('div', { class: 'scroll' }, el('table', { class: 'fleet', id: 'fleet' }, el('thead', {}, el('tr', {}, heads)), body)),
  );

  function saveParams() {
    const params = new URLSearchParams();
    if (query) params.set('q', query);
    if (stateFilter) params.set('state', stateFilter);
    if (sortKey !== 'host') params.set('sort', sortKey);
    if (descending) params.set('dir', 'desc');
    context.setParams(params);
  }

  function matches(row) {
    if (stateFilter && row.state.state !== stateFilter) return false;
    if (!query) return true;
    if (/[*?]/.test(query)) {
      const pattern = new RegExp(
        '^' + query.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.') + '$',
        'i',
      );
      return pattern.test(row.host);
    }
    return row.host.toLowerCase().includes(query.toLowerCase());
  }

  function makeRow(host) {
    const cells = {};
    const tr = el('tr', { 'data-host': host });
    for (const [key] of COLUMNS) {
      const td = el('td', { class: 'c-' + key });
      // A live figure sits in a box of fixed size (CSS `.cell`): a changed text lays out that box alone,
      // not the whole table of every host.
      cells[key] = LIVE.has(key) ? el('div', { class: 'cell' }) : td;
      if (cells[key] !== td) td.append(cells[key]);
      tr.append(td);
    }
    cells.host.append(el('a', { href: route('host', host), text: host }));
    cells.stateText = el('span', { class: 'state' });
    cells.error = el('span', { class: 'error-line' });
    cells.state.append(cells.stateText, cells.error);
    cells.netText = el('span');
    cells.netSpark = el('canvas', { class: 'spark', width: 80, height: 18, 'aria-hidden': 'true' });
    cells.net.append(cells.netText, cells.netSpark);
    cells.diskText = el('span');
    cells.diskSpark = el('canvas', { class: 'spark', width: 80, height: 18, 'aria-hidden': 'true' });
    cells.disk.append(cells.diskText, cells.diskSpark);
    cells.net.classList.add('spark-cell');
    cells.disk.classList.add('spark-cell');
    return { host, tr, cells, state: { state: 'connecting' }, figures: null, net: [], disk: [], interval: 15000 };
  }

  function upsert(state) {
    let row = rows.get(state.host);
    if (!row) {
      row = makeRow(state.host);
      rows.set(state.host, row);
      visibility.observe(row.tr);
      reorder = true;
      reorderNow = true;
    }
    row.state = state;
    row.lastTick = state.last_tick ? Date.parse(state.last_tick) : null;
    return row;
  }

  function applyRecord(row, record) {
    const at = Date.parse(record.collected_at);
    if (row.recordAt && at > row.recordAt) row.interval = Math.max(1000, at - row.recordAt);
    row.recordAt = at;
    row.lastTick = at;
    row.figures = figures(record) || (record.error ? null : row.figures);
    if (row.figures) {
      row.net.push(row.figures.net);
      row.disk.push(row.figures.disk);
      if (row.net.length > SPARK_POINTS) row.net.shift();
      if (row.disk.length > SPARK_POINTS) row.disk.shift();
    }
  }

  /** A frame as soon as the browser draws one (a click, a filter, the rest of a burst). */
  function renderSoon() {
    clearTimeout(flushTimer);
    flushTimer = 0;
    if (!frame) frame = requestAnimationFrame(render);
  }

  /** A frame for live figures: the next one at least FLUSH_MS after the last, with every record since. */
  function schedule() {
    if (frame || flushTimer) return;
    const wait = flushedAt + FLUSH_MS - performance.now();
    if (wait <= 0) renderSoon();
    else
      flushTimer = setTimeout(() => {
        flushTimer = 0;
        renderSoon();
      }, wait);
  }

  function mark(row) {
    dirty.add(row);
    if (COLUMNS.some(([key]) => key === sortKey && key !== 'host')) reorder = true;
    if (onScreen.has(row) || reorder) schedule();
  }

  /** Re-sorts at once (a click, a filter, a host added or removed). */
  function reorderSoon() {
    reorder = true;
    reorderNow = true;
    renderSoon();
  }

  let sparkColor = '';
  let sparkTheme = null;
  // Only rows on screen are rendered; a row scrolled into view is rendered whole in the next frame.
  const onScreen = new Set();
  const visibility = new IntersectionObserver((entries) => {
    let shown = false;
    for (const entry of entries) {
      const row = rows.get(entry.target.dataset.host);
      if (!row) continue;
      if (entry.isIntersecting) {
        onScreen.add(row);
        dirty.add(row);
        shown = true;
      } else {
        onScreen.delete(row);
      }
    }
    if (shown) renderSoon();
  });

  function renderRow(row) {
    const { cells, state, figures: fig } = row;
    setText(cells.stateText, state.state);
    row.tr.dataset.state = state.state;
    row.tr.dataset.collectedAt = row.recordAt ? String(row.recordAt) : '';
    const error = state.state === 'ok' ? '' : state.last_error || '';
    setText(cells.error, error);
    if (cells.error.title !== error) cells.error.title = error;
    setText(cells.cpu, f.percent(fig?.cpu));
    setText(cells.memory, f.percent(fig?.memory));
    setText(cells.fullest, fig?.fullest == null ? '–' : f.percent(fig.fullest) + ' ' + fig.fullestMount);
    setText(cells.netText, fig ? '↓' + f.rate(fig.rx) + ' ↑' + f.rate(fig.tx) : '–');
    setText(cells.diskText, fig ? 'r ' + f.rate(fig.read) + ' w ' + f.rate(fig.write) : '–');
    sparkline(cells.netSpark, row.net, sparkColor);
    sparkline(cells.diskSpark, row.disk, sparkColor);
    setText(cells.load, f.number(fig?.loadPerCore));
    setText(cells.uptime, f.duration(fig?.uptime));
    renderAge(row, Date.now());
  }

  function renderAge(row, now) {
    const age = row.lastTick ? (now - row.lastTick) / 1000 : null;
    setText(row.cells.age, age == null ? '–' : f.duration(age));
    const stale = age != null && age * 1000 > Math.max(30000, 2.5 * row.interval);
    if (row.tr.classList.contains('stale') !== stale) row.tr.classList.toggle('stale', stale);
  }

  /**
   * Renders dirty rows on screen until the frame's budget is spent; answers the rows rendered and whether rows on
   * screen are left for the next frame. Rows off screen stay dirty until they scroll into view.
   */
  function renderDirty(started) {
    let rendered = 0;
    for (const row of onScreen) {
      if (!dirty.has(row)) continue;
      if (performance.now() - started >= FRAME_BUDGET_MS) return { rendered, more: true };
      dirty.delete(row);
      renderRow(row);
      rendered += 1;
    }
    return { rendered, more: false };
  }

  function render() {
    if (frame) cancelAnimationFrame(frame);
    frame = 0;
    const started = performance.now();
    flushedAt = started;
    // Reading a colour of the theme computes the page's style: only when the theme changed.
    const theme = document.documentElement.dataset.theme ?? '';
    if (dirty.size && theme !== sparkTheme) {
      sparkTheme = theme;
      sparkColor = themeColor('--accent', '#1f6feb');
    }
    if (started - agesAt >= 900) {
      agesAt = started;
      const now = Date.now();
      for (const row of onScreen) if (!dirty.has(row)) renderAge(row, now);
    }
    const due = reorderNow || started - reorderedAt >= REORDER_EVERY_MS;
    if (reorder && !due && !reorderTimer) {
      reorderTimer = setTimeout(() => {
        reorderTimer = 0;
        schedule();
      }, REORDER_EVERY_MS - (started - reorderedAt));
    }
    if (reorder && due) {
      reorder = false;
      reorderNow = false;
      reorderedAt = started;
      const getter = COLUMNS.find(([key]) => key === sortKey)?.[2] || COLUMNS[0][2];
      const shown = [...rows.values()].filter(matches);
      shown.sort((a, b) => {
        const x = getter(a);
        const y = getter(b);
        if (x == null && y == null) return a.host.localeCompare(b.host);
        if (x == null) return 1;
        if (y == null) return -1;
        const order = typeof x === 'string' ? x.localeCompare(y) : x - y;
        return (descending ? -order : order) || a.host.localeCompare(b.host);
      });
      const current = body.children;
      const same = current.length === shown.length && shown.every((row, index) => current[index] === row.tr);
      if (!same) body.replaceChildren(...shown.map((row) => row.tr));
      setText(count, shown.length === rows.size ? rows.size + ' hosts' : shown.length + ' of ' + rows.size + ' hosts');
      for (const head of heads) {
        const key = head.dataset.key;
        head.setAttribute('aria-sort', key === sortKey ? (descending ? 'descending' : 'ascending') : 'none');
      }
    }
    const { rendered, more } = renderDirty(started);
    if (more) renderSoon();
    keepLast(renderScriptTimes, performance.now() - started);
    keepLast(renderRows, rendered);
    measureAfterFrame(started);
  }

  async function load() {
    try {
      const answer = context.takeInitialHosts?.() || (await getJSON('/api/v1/hosts?view=summary', abort.signal));
      const seen = new Set();
      for (const state of answer.hosts) {
        const row = upsert(state);
        seen.add(state.host);
        if (state.latest) applyRecord(row, state.latest);
        row.lastTick = state.last_tick ? Date.parse(state.last_tick) : null;
        dirty.add(row);
      }
      for (const [host, row] of rows) {
        if (!seen.has(host)) {
          rows.delete(host);
          visibility.unobserve(row.tr);
          onScreen.delete(row);
          row.tr.remove();
        }
      }
      setText(message, answer.hosts.length ? '' : 'This serve watches no host yet.');
      reorderSoon();
    } catch (error) {
      if (error.name === 'AbortError') return;
      if (error instanceof AuthError) context.unauthorized(error.message);
      else setText(message, error instanceof APIError ? error.message : String(error));
    }
  }

  // Hosts with a record so far, rendered or not (read by Scripts/bench/web: rows off screen are not rendered).
  globalThis.hostscopeFleetHostsWithRecord = () => [...rows.values()].filter((row) => row.recordAt).length;

  const unsubscribe = [
    context.feed.on('record', (record) => {
      const row = rows.get(record.host);
      if (!row) return;
      // Records shown since the page opened (read by Scripts/bench/web to count updates).
      globalThis.hostscopeFleetRecords = (globalThis.hostscopeFleetRecords || 0) + 1;
      applyRecord(row, record);
      mark(row);
    }),
    context.feed.on('host_state', (state) => {
      const row = upsert(state);
      mark(row);
    }),
    context.feed.on('fleet', (change) => {
      if (change.change === 'removed') {
        const row = rows.get(change.host);
        if (row) {
          rows.delete(change.host);
          dirty.delete(row);
          visibility.unobserve(row.tr);
          onScreen.delete(row);
          row.tr.remove();
        }
        reorderSoon();
      } else {
        mark(upsert({ host: change.host, state: 'connecting' }));
      }
    }),
    context.feed.on('reset', () => load()),
  ];

  filter.addEventListener('input', () => {
    query = filter.value.trim();
    saveParams();
    reorderSoon();
  });
  states.addEventListener('change', () => {
    stateFilter = states.value;
    saveParams();
    reorderSoon();
  });
  for (const head of heads) {
    head.addEventListener('click', () => {
      const key = head.dataset.key;
      descending = key === sortKey ? !descending : key !== 'host' && key !== 'state';
      sortKey = key;
      saveParams();
      reorderSoon();
    });
  }
  // Ages count up on the rows on screen, in the next frame of live figures; a row scrolled into view is
  // rendered whole.
  const ages = setInterval(() => {
    if (sortKey === 'age') reorder = true;
    schedule();
  }, 1000);
  load();

  return () => {
    abort.abort();
    unmountAlerts();
    visibility.disconnect();
    clearInterval(ages);
    clearTimeout(reorderTimer);
    clearTimeout(flushTimer);
    if (frame) cancelAnimationFrame(frame);
    for (const off of unsubscribe) off();
  };
}
