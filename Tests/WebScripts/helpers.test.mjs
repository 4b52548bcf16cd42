// The dashboard's pure helpers under Node's test runner (node --test), run by WebAssetsTests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as f from '../../Sources/HostscopeWeb/Assets/format.js';
import { figures, realFilesystems } from '../../Sources/HostscopeWeb/Assets/fleet.js';
import { EventFeed, readLines } from '../../Sources/HostscopeWeb/Assets/api.js';
import { visible } from '../../Sources/HostscopeWeb/Assets/files.js';

test('figures read as the command line prints them', () => {
  assert.equal(f.bytes(1536), '1.5 KiB');
  assert.equal(f.bytes(512), '512 B');
  assert.equal(f.rate(3 * 1024 * 1024), '3.0 MiB/s');
  assert.equal(f.percent(12.345), '12.3 %');
  assert.equal(f.percent(null), '–');
  assert.equal(f.duration(90061), '1 d 1 h');
  assert.equal(f.duration(65), '1 min 5 s');
  assert.equal(f.duration(0), '0 s');
  assert.equal(f.milliseconds(1500), '1.50 s');
});

test('a record gives the fleet its figures without loopback or pseudo filesystems', () => {
  const record = {
    cpu: { busy_percent: 40, cores: 4 },
    memory: { used_percent: 50 },
    load: { '1m': 2 },
    uptime_seconds: 100,
    network: [
      { interface: 'lo', rx_bytes_per_second: 1000, tx_bytes_per_second: 1000 },
      { interface: 'eth0', rx_bytes_per_second: 10, tx_bytes_per_second: 20 },
    ],
    disks: [
      { filesystem: '/dev/sda1', type: 'ext4', mount: '/', size_bytes: 10, used_percent: 60, read_bytes_per_second: 5, write_bytes_per_second: 7 },
      { filesystem: 'tmpfs', type: 'tmpfs', mount: '/run', size_bytes: 10, used_percent: 99 },
      { filesystem: 'overlay', type: 'overlay', mount: '/var/lib/docker/x', size_bytes: 10, used_percent: 95 },
    ],
  };
  assert.deepEqual(realFilesystems(record).map((disk) => disk.mount), ['/']);
  const result = figures(record);
  assert.equal(result.fullest, 60);
  assert.equal(result.fullestMount, '/');
  assert.equal(result.rx, 10);
  assert.equal(result.tx, 20);
  assert.equal(result.disk, 12);
  assert.equal(result.loadPerCore, 0.5);
  assert.equal(figures({ error: { kind: 'connect', message: 'refused' } }), null);
});

test('the event stream reader splits events across chunks and keeps the last id', async () => {
  const feed = new EventFeed();
  const seen = [];
  feed.on('record', (data, id) => seen.push(['record', data.host, id]));
  feed.on('reset', (data) => seen.push(['reset', data.reason]));
  const chunks = ['retry: 3000\n\nid: 1-1\nevent: rec', 'ord\ndata: {"host":"w', 'eb1"}\n\n: keep-alive\n\n',
    'id: 1-2\r\nevent: reset\r\ndata: {"reason":"missed"}\r\n\r\n', 'id: 1-3\nevent: record\ndata: not json\n\n'];
  const encoder = new TextEncoder();
  const body = new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
  await feed.read(body);
  assert.deepEqual(seen, [['record', 'web1', '1-1'], ['reset', 'missed']]);
  assert.equal(feed.lastId, '1-3');
  assert.equal(feed.retryMs, 3000);
});

test('a file line shows its control characters as symbols, an ANSI escape inert', () => {
  assert.equal(visible('\x1b[31mred\x1b[0m'), '\u241b[31mred\u241b[0m');
  assert.equal(visible('a\tb\x00\x7f'), 'a\tb\u2400\u2421');
  assert.equal(visible('<script>'), '<script>');
});

test('a streamed body is read line by line across chunks', async () => {
  const chunks = ['{"text":"a', '"}\r\n\n{"end":', '"gone"}\n'];
  const body = new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
      controller.close();
    },
  });
  const lines = [];
  await readLines(body, (line) => lines.push(line));
  assert.deepEqual(lines, ['{"text":"a"}', '', '{"end":"gone"}']);
});

test('a time reads as the browser writes it, today as a clock and another day with its date', () => {
  const today = new Date();
  today.setHours(9, 5, 7, 0);
  assert.equal(f.time(today), today.toLocaleTimeString([], { hour12: false }));
  const before = new Date(2024, 1, 29, 23, 59, 1);
  assert.equal(f.time(before), before.toLocaleDateString() + ' ' + before.toLocaleTimeString([], { hour12: false }));
  assert.equal(f.time(new Date('not a time')), '–');
});
