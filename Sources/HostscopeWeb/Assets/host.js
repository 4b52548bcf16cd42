// The Host screen: charts over a range from the history (live at the right edge), the top processes,
// OS facts, and the shown range exported as CSV or JSON.

import { APIError, AuthError, getJSON, hostPath } from './api.js';
import { download, el, setText } from './dom.js';
import * as f from './format.js';
import { figures, realFilesystems } from './fleet.js';
import { timeChart } from './chart.js';
import { mountAlerts } from './alerts.js';

const RANGES = { live: 600, '1h': 3600, '12h': 43200, '24h': 86400, '7d': 604800 };
/** The server keeps one record per step for the long ranges: about 700 to 1,000 points a chart. */
const STEPS = { '12h': ['1m', 60000], '24h': ['2m', 120000], '7d': ['10m', 600000] };
/** Pages of history read at most (1,000 records each). */
const MAX_PAGES = 20;

const CHARTS = [
  {
    id: 'cpu',
    title: 'CPU',
    format: (v) => v.toFixed(0) + ' %',
    max: 100,
    series: [
      ['user', (r) => r.cpu?.user_percent],
      ['system', (r) => r.cpu?.system_percent],
      ['iowait', (r) => r.cpu?.iowait_percent],
      ['steal', (r) => r.cpu?.steal_percent],
    ],
  },
  {
    id: 'memory',
    title: 'Memory',
    format: f.bytes,
    series: [
      ['used', (r) => r.memory?.used_bytes],
      ['cache', (r) => r.memory?.cached_bytes],
      ['available', (r) => r.memory?.available_bytes],
      ['swap used', (r) => r.memory?.swap_used_bytes],
    ],
  },
  {
    id: 'network',
    title: 'Network',
    format: f.rate,
    series: [
      ['received', (r) => figures(r)?.rx],
      ['sent', (r) => figures(r)?.tx],
    ],
  },
  {
    id: 'disk',
    title: 'Disk I/O',
    format: f.rate,
    series: [
      ['read', (r) => figures(r)?.read],
      ['written', (r) => figures(r)?.write],
    ],
  },
  {
    id: 'filesystems',
    title: 'Filesystems used',
    format: (v) => v.toFixed(0) + ' %',
    max: 100,
    dynamic: (last) =>
      realFilesystems(last).map((disk) => [disk.mount, (r) => (r.disks || []).find((d) => d.mount === disk.mount)?.used_percent]),
  },
  {
    id: 'inodes',
    title: 'Inodes used',
    format: (v) => v.toFixed(0) + ' %',
    max: 100,
    dynamic: (last) =>
      realFilesystems(last)
        .filter((disk) => disk.inodes_total > 0)
        .map((disk) => [disk.mount, (r) => inodePercent((r.disks || []).find((d) => d.mount === disk.mount))]),
  },
  {
    id: 'interfaces',
    title: 'Network by interface',
    format: f.rate,
    dynamic: (last) =>
      interfaces(last).flatMap((name) => [
        [name + ' ↓', (r) => findInterface(r, name)?.rx_bytes_per_second],
        [name + ' ↑', (r) => findInterface(r, name)?.tx_bytes_per_second],
      ]),
  },
  {
    id: 'interface-errors',
    title: 'Network errors and drops',
    format: (v) => f.number(v, 2) + '/s',
    dynamic: (last) => interfaces(last).map((name) => [name, (r, before) => errorRate(r, before, name)]),
  },
  {
    id: 'cores',
    title: 'CPU per core',
    format: (v) => v.toFixed(0) + ' %',
    max: 100,
    optional: 'cores',
    dynamic: (last) =>
      (last.cpu?.per_core || []).map((core) => ['cpu' + core.core, (r) => r.cpu?.per_core?.find((c) => c.core === core.core)?.busy_percent]),
  },
];

/** Series beyond this many in one chart are left out (the legend says how many). */
const MAX_SERIES = 8;

function inodePercent(disk) {
  return disk && disk.inodes_total > 0 && disk.inodes_used != null ? (disk.inodes_used / disk.inodes_total) * 100 : null;
}

/** The interfaces of a record, loopback left out. */
function interfaces(record) {
  return (record.network || []).map((item) => item.interface).filter((name) => !/^lo\d*$/.test(name));
}

function findInterface(record, name) {
  return (record.network || []).find((item) => item.interface === name);
}

/** Errors and drops of an interface per second since the record before (counters; none across a gap or a reset). */
function errorRate(record, before, name) {
  const now = findInterface(record, name);
  const then = before && !before.error ? findInterface(before, name) : null;
  if (!now || !then) return null;
  const seconds = (Date.parse(record.collected_at) - Date.parse(before.collected_at)) / 1000;
  const total = (item) => ['rx_errors', 'tx_errors', 'rx_dropped', 'tx_dropped'].reduce((sum, key) => sum + (item[key] || 0), 0);
  const delta = total(now) - total(then);
  return seconds > 0 && delta >= 0 ? delta / seconds : null;
}

export function mount(root, context, host) {
  const abort = new AbortController();
  let range = RANGES[context.params.get('range')] ? context.params.get('range') : '1h';
  let records = [];
  let latest = null;
  let interval = 15000;
  let frame = 0;
  let generation = 0;
  /** The [from, to] a drag on a chart chose (ms), or null for the whole range, live at the right edge. */
  let zoom = null;
  const zoomNote = el('p', { class: 'note', id: 'zoom-note' });

  const title = el('h1', { text: host });
  const stateLine = el('p', { class: 'state-line' });
  const banner = el('p', { class: 'banner', hidden: true });
  const note = el('p', { class: 'note', id: 'range-note' });
  const facts = el('dl', { class: 'facts' });
  /** The optional charts shown (`cores`), kept in the URL as `show=cores`. */
  const extras = new Set((context.params.get('show') || '').split(',').filter((name) => name === 'cores'));
  const coresButton = el('button', { type: 'button', id: 'show-cores', text: 'Per core', 'aria-pressed': String(extras.has('cores')) });
  const rangeButtons = Object.keys(RANGES).map((name) =>
    el('button', { type: 'button', 'data-range': name, text: name, 'aria-pressed': String(name === range) }),
  );
  const chartBlocks = CHARTS.map((chart) => {
    const legend = el('div', { class: 'legend' });
    const canvas = el('canvas', { class: 'chart', id: 'chart-' + chart.id, width: 600, height: 180, role: 'img', 'aria-label': chart.title + ' chart' });
    return { chart, legend, canvas, node: el('section', { class: 'chart-block' }, el('h2', { text: chart.title }), legend, canvas) };
  });
  const processBody = el('tbody');
  let processSort = { key: 'cpu_percent', descending: true };
  const processHeads = [
    ['pid', 'PID'],
    ['user', 'User'],
    ['cpu_percent', 'CPU %'],
    ['memory_percent', 'Mem %'],
    ['rss_bytes', 'RSS'],
    ['command', 'Command'],
  ].map(([key, label]) => el('th', { scope: 'col', 'data-key': key }, el('button', { type: 'button', class: 'sort', text: label })));

  root.append(
    el('div', { class: 'toolbar' }, el('a', { href: '#/', text: '← Fleet', class: 'back' }), title, stateLine),
    banner,
  );
  const unmountAlerts = mountAlerts(root, context, host);
  root.append(
    el(
      'div',
      { class: 'toolbar' },
      el('div', { class: 'ranges', role: 'group', 'aria-label': 'Range' }, rangeButtons),
      coresButton,
      el('button', { type: 'button', id: 'export-csv', text: 'Export CSV', onclick: () => exportRange('csv') }),
      el('button', { type: 'button', id: 'export-json', text: 'Export JSON', onclick: () => exportRange('json') }),
    ),
    note,
    zoomNote,
    el('div', { class: 'charts' }, chartBlocks.map((block) => block.node)),
    el('div', { class: 'columns' },
      el('section', { class: 'processes' }, el('h2', { text: 'Top processes' }),
        el('div', { class: 'scroll' }, el('table', { id: 'processes' }, el('thead', {}, el('tr', {}, processHeads)), processBody))),
      el('section', {}, el('h2', { text: 'System' }), facts)),
  );

  function showState(state) {
    if (!state) return;
    setText(stateLine, state.state + (state.state !== 'ok' && state.last_error ? ': ' + state.last_error : ''));
    stateLine.dataset.state = state.state;
  }

  function showFacts(record) {
    if (!record || record.error) return;
    const rows = [
      ['OS', record.os?.name],
      ['Kernel', record.os?.kernel],
      ['Architecture', record.os?.arch],
      ['Collector', record.collector],
      ['Cores', record.cpu?.cores],
      ['Memory', f.bytes(record.memory?.total_bytes)],
      ['Uptime', f.duration(record.uptime_seconds)],
      ['Load', record.load ? [record.load['1m'], record.load['5m'], record.load['15m']].map((v) => f.number(v)).join(' ') : null],
      ['Collected', f.time(new Date(record.collected_at))],
    ];
    facts.replaceChildren(
      ...rows.filter(([, value]) => value != null).flatMap(([name, value]) => [el('dt', { text: name }), el('dd', { text: value })]),
    );
  }

  function showProcesses(record) {
    const list = (record && record.processes) || [];
    const { key, descending } = processSort;
    const sorted = [...list].sort((a, b) => {
      const x = a[key];
      const y = b[key];
      const order = typeof x === 'string' ? String(x).localeCompare(String(y)) : (x ?? -1) - (y ?? -1);
      return descending ? -order : order;
    });
    processBody.replaceChildren(
      ...sorted.map((process) =>
        el('tr', {},
          el('td', { text: process.pid }),
          el('td', { text: process.user ?? '' }),
          el('td', { text: f.number(process.cpu_percent, 1) }),
          el('td', { text: f.number(process.memory_percent, 1) }),
          el('td', { text: f.bytes(process.rss_bytes) }),
          el('td', { class: 'command', text: process.command ?? '' }),
        ),
      ),
    );
    if (!list.length) processBody.append(el('tr', {}, el('td', { colspan: 6, class: 'note', text: 'No process list in the latest record.' })));
  }

  function draw() {
    frame = 0;
    const to = zoom ? zoom[1] : Date.now();
    const from = zoom ? zoom[0] : to - RANGES[range] * 1000;
    setText(zoomNote, zoom ? 'Zoomed to ' + f.time(new Date(from)) + ' – ' + f.time(new Date(to)) + '; double-click a chart to zoom out.' : '');
    const times = records.map((record) => Date.parse(record.collected_at));
    const gap = Math.max(2.5 * interval, 30000);
    // The series of the per-item charts follow the newest record that has figures.
    let last = null;
    for (let index = records.length - 1; index >= 0 && !last; index -= 1) if (!records[index].error) last = records[index];
    for (const { chart, legend, canvas, node } of chartBlocks) {
      node.hidden = Boolean(chart.optional) && !extras.has(chart.optional);
      if (node.hidden) continue;
      const all = chart.dynamic ? (last ? chart.dynamic(last) : []) : chart.series;
      const series = all.slice(0, MAX_SERIES);
      const drawn = series.map(([label, read]) => ({
        label,
        values: records.map((record, index) => (record.error ? null : read(record, records[index - 1]) ?? null)),
      }));
      const start = performance.now();
      const { segments } = timeChart(canvas, { times, series: drawn, from, to, format: chart.format, gap, max: chart.max });
      // The pieces of the longest line: more than one where the host was down (read by the browser test).
      canvas.dataset.segments = String(segments);
      canvas.dataset.drawMs = (performance.now() - start).toFixed(2);
      canvas.dataset.points = String(times.length);
      legend.replaceChildren(
        ...drawn.map(({ label }, index) => el('span', { class: 'key k' + index, text: label })),
        ...(all.length > series.length ? [el('span', { class: 'note', text: '+' + (all.length - series.length) + ' more not drawn' })] : []),
      );
      if (!all.length) legend.replaceChildren(el('span', { class: 'note', text: 'No figures in this range.' }));
    }
  }

  function schedule() {
    if (!frame) frame = requestAnimationFrame(draw);
  }

  async function loadRange() {
    const mine = ++generation;
    for (const button of rangeButtons) button.setAttribute('aria-pressed', String(button.dataset.range === range));
    setText(note, 'Reading the history…');
    const collected = [];
    let cursor = null;
    try {
      for (let page = 0; page < MAX_PAGES; page += 1) {
        const query = new URLSearchParams({ since: range === 'live' ? '10m' : range, limit: '1000' });
        if (STEPS[range]) query.set('step', STEPS[range][0]);
        if (cursor) query.set('cursor', cursor);
        const answer = await getJSON(hostPath(host) + '/history?' + query, abort.signal);
        if (mine !== generation) return;
        collected.push(...answer.records);
        cursor = answer.next_cursor;
        if (!cursor) break;
      }
    } catch (error) {
      if (error.name === 'AbortError' || mine !== generation) return;
      if (error instanceof AuthError) return context.unauthorized(error.message);
      setText(note, error instanceof APIError ? error.message : String(error));
      records = [];
      schedule();
      return;
    }
    records = collected;
    const times = records.map((record) => Date.parse(record.collected_at));
    if (times.length > 1) {
      const steps = times.slice(1).map((time, index) => time - times[index]).sort((a, b) => a - b);
      interval = Math.max(1000, steps[Math.floor(steps.length / 2)]);
    }
    const shown = records.length + (records.length === 1 ? ' record' : ' records') + ' over the last ' + (range === 'live' ? '10 min' : range) + (STEPS[range] ? ' (one per ' + STEPS[range][0] + ')' : '');
    setText(note, records.length ? shown : 'No records of ' + host + ' in the last ' + range + '.');
    document.body.dataset.hostRange = range;
    schedule();
  }

  async function loadHost() {
    try {
      const state = await getJSON(hostPath(host), abort.signal);
      showState(state);
      latest = state.latest;
      showFacts(latest);
      showProcesses(latest);
    } catch (error) {
      if (error.name === 'AbortError') return;
      if (error instanceof AuthError) return context.unauthorized(error.message);
      banner.hidden = false;
      setText(banner, error instanceof APIError && error.status === 404 ? host + ' is not watched by this serve now; its stored history is shown below.' : error.message);
    }
  }

  function exportRange(kind) {
    const name = host.replace(/[^A-Za-z0-9._-]+/g, '_') + '-' + range + '.' + kind;
    if (kind === 'json') {
      download(name, 'application/json', JSON.stringify({ host, range, records }, null, 2));
      return;
    }
    const quote = (value) => {
      const text = value == null ? '' : String(value);
      return /[",\n\r]/.test(text) || /^[=+\-@\t]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
    };
    const lines = [['collected_at', 'error', 'cpu_busy_percent', 'memory_used_percent', 'fullest_fs_percent', 'rx_bytes_per_second', 'tx_bytes_per_second', 'read_bytes_per_second', 'write_bytes_per_second', 'load1_per_core'].join(',')];
    for (const record of records) {
      const fig = figures(record);
      lines.push([record.collected_at, record.error ? record.error.kind + ': ' + record.error.message : '', fig?.cpu, fig?.memory, fig?.fullest, fig?.rx, fig?.tx, fig?.read, fig?.write, fig?.loadPerCore].map(quote).join(','));
    }
    download(name, 'text/csv', lines.join('\n') + '\n');
  }

  function keepParams() {
    const params = new URLSearchParams();
    params.set('range', range);
    if (extras.size) params.set('show', [...extras].join(','));
    context.setParams(params);
  }
  for (const button of rangeButtons) {
    button.addEventListener('click', () => {
      range = button.dataset.range;
      zoom = null;
      keepParams();
      loadRange();
    });
  }
  coresButton.addEventListener('click', () => {
    if (extras.has('cores')) extras.delete('cores');
    else extras.add('cores');
    coresButton.setAttribute('aria-pressed', String(extras.has('cores')));
    keepParams();
    schedule();
  });
  for (const head of processHeads) {
    head.addEventListener('click', () => {
      const key = head.dataset.key;
      processSort = { key, descending: key === processSort.key ? !processSort.descending : key !== 'command' && key !== 'user' };
      showProcesses(latest);
    });
  }
  const unsubscribe = [
    context.feed.on('record', (record) => {
      if (record.host !== host) return;
      const step = STEPS[range] && STEPS[range][1];
      const last = records[records.length - 1];
      if (step && last && Math.floor(Date.parse(last.collected_at) / step) === Math.floor(Date.parse(record.collected_at) / step)) {
        records[records.length - 1] = record;
      } else {
        records.push(record);
      }
      const cutoff = Date.now() - RANGES[range] * 1000;
      while (records.length && Date.parse(records[0].collected_at) < cutoff) records.shift();
      if (!record.error) {
        latest = record;
        showFacts(record);
        showProcesses(record);
      }
      schedule();
    }),
    context.feed.on('host_state', (state) => {
      if (state.host === host) showState(state);
    }),
    context.feed.on('fleet', (change) => {
      if (change.host !== host) return;
      banner.hidden = change.change !== 'removed';
      setText(banner, change.change === 'removed' ? host + ' was removed from this serve\'s fleet; its stored history stays below.' : '');
    }),
    context.feed.on('reset', () => {
      loadHost();
      loadRange();
    }),
  ];
  // Drag across a chart to zoom every chart to that span; double-click to go back to the range.
  for (const { canvas } of chartBlocks) {
    let start = null;
    const timeAt = (event) => {
      const box = canvas.getBoundingClientRect();
      const left = 64;
      const width = Math.max(10, box.width - left - 8);
      const to = zoom ? zoom[1] : Date.now();
      const from = zoom ? zoom[0] : to - RANGES[range] * 1000;
      const share = Math.min(1, Math.max(0, (event.clientX - box.left - left) / width));
      return from + share * (to - from);
    };
    canvas.addEventListener('pointerdown', (event) => {
      start = timeAt(event);
    });
    canvas.addEventListener('pointerup', (event) => {
      if (start === null) return;
      const end = timeAt(event);
      if (Math.abs(end - start) > 1000) {
        zoom = [Math.min(start, end), Math.max(start, end)];
        schedule();
      }
      start = null;
    });
    canvas.addEventListener('dblclick', () => {
      zoom = null;
      schedule();
    });
  }
  const resize = () => schedule();
  window.addEventListener('resize', resize);
  const tick = setInterval(schedule, 15000);
  // This host's live records whole (processes, every interface and disk); the others' stay summaries.
  context.feed.focus(host);
  loadHost();
  loadRange();

  return () => {
    abort.abort();
    unmountAlerts();
    generation += 1;
    clearInterval(tick);
    window.removeEventListener('resize', resize);
    if (frame) cancelAnimationFrame(frame);
    for (const off of unsubscribe) off();
    context.feed.focus(null);
  };
}
