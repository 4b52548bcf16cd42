// The Fleet screen: a row per host, live. Events only mark rows dirty; one animation frame renders the
// changed rows' cells (text set only where it changed), so 300 hosts ticking cost a few rows a frame.

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

/** Main-thread milliseconds of the latest renders (at most 256), read by Scripts/bench/web. */
const renderTimes = [];
globalThis.hostscopeFleetRenderTimes = renderTimes;

export function mount(root, context) {
  const rows = new Map();
  const dirty = new Set();
  let frame = 0;
  let reorder = true;
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
      cells[key] = el('td', { class: 'c-' + key });
      tr.append(cells[key]);
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
    return { host, tr, cells, state: { state: 'connecting' }, figures: null, net: [], disk: [], interval: 15000 };
  }

  function upsert(state) {
    let row = rows.get(state.host);
    if (!row) {
      row = makeRow(state.host);
      rows.set(state.host, row);
      visibility.observe(row.tr);
      reorder = true;
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

  function mark(row) {
    dirty.add(row);
    if (COLUMNS.some(([key]) => key === sortKey && key !== 'host')) reorder = true;
    if (!frame) frame = requestAnimationFrame(render);
  }

  let sparkColor = '';
  // Sparklines are drawn only for rows on screen (a canvas costs more than all of a row's text); a row
  // scrolled into view draws the ones it missed.
  const onScreen = new Set();
  const visibility = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      const row = rows.get(entry.target.dataset.host);
      if (!row) continue;
      if (entry.isIntersecting) {
        onScreen.add(row);
        if (row.sparksStale) mark(row);
      } else {
        onScreen.delete(row);
      }
    }
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
    row.sparksStale = !onScreen.has(row);
    if (!row.sparksStale) {
      sparkline(cells.netSpark, row.net, sparkColor);
      sparkline(cells.diskSpark, row.disk, sparkColor);
    }
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

  function render() {
    frame = 0;
    const started = performance.now();
    if (dirty.size) sparkColor = themeColor('--accent', '#1f6feb');
    for (const row of dirty) renderRow(row);
    dirty.clear();
    if (reorder) {
      reorder = false;
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
    renderTimes.push(performance.now() - started);
    if (renderTimes.length > 256) renderTimes.shift();
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
      reorder = true;
      if (!frame) frame = requestAnimationFrame(render);
    } catch (error) {
      if (error.name === 'AbortError') return;
      if (error instanceof AuthError) context.unauthorized(error.message);
      else setText(message, error instanceof APIError ? error.message : String(error));
    }
  }

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
        reorder = true;
        if (!frame) frame = requestAnimationFrame(render);
      } else {
        mark(upsert({ host: change.host, state: 'connecting' }));
      }
    }),
    context.feed.on('reset', () => load()),
  ];

  filter.addEventListener('input', () => {
    query = filter.value.trim();
    reorder = true;
    saveParams();
    render();
  });
  states.addEventListener('change', () => {
    stateFilter = states.value;
    reorder = true;
    saveParams();
    render();
  });
  for (const head of heads) {
    head.addEventListener('click', () => {
      const key = head.dataset.key;
      descending = key === sortKey ? !descending : key !== 'host' && key !== 'state';
      sortKey = key;
      reorder = true;
      saveParams();
      render();
    });
  }
  const ages = setInterval(() => {
    const now = Date.now();
    for (const row of rows.values()) renderAge(row, now);
    if (sortKey === 'age') {
      reorder = true;
      render();
    }
  }, 1000);
  load();

  return () => {
    abort.abort();
    unmountAlerts();
    visibility.disconnect();
    clearInterval(ages);
    if (frame) cancelAnimationFrame(frame);
    for (const off of unsubscribe) off();
  };
}
