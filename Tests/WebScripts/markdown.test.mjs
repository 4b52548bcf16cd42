// The chat's Markdown subset under Node's test runner (node --test), run by WebAssetsTests: what the model writes
// becomes plain objects whose strings the page sets as text; raw HTML stays text and only http(s) links are links.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseInline, parseMarkdown, safeHref } from '../../Sources/HostscopeWeb/Assets/markdown.js';

test('paragraphs, headings, lists and fenced code are read as blocks', () => {
  const blocks = parseMarkdown('## Disk\n\nThe **root** is *fine*.\n\n- one\n- two `df`\n\n1. first\n2. second\n\n```sh\n$ df -h\n```\n');
  assert.deepEqual(blocks.map((block) => block.type), ['h', 'p', 'ul', 'ol', 'code']);
  assert.equal(blocks[0].level, 2);
  assert.deepEqual(blocks[1].inline.map((part) => part.type), ['text', 'strong', 'text', 'em', 'text']);
  assert.equal(blocks[2].items.length, 2);
  assert.deepEqual(blocks[2].items[1][1], { type: 'code', text: 'df' });
  assert.equal(blocks[4].text, '$ df -h');
  assert.equal(blocks[4].language, 'sh');
});

test('raw HTML is text, in paragraphs and in code alike', () => {
  const blocks = parseMarkdown('<img src=x onerror=alert(1)> and <script>alert(2)</script>\n\n```\n<b>x</b>\n```');
  assert.deepEqual(blocks[0].inline, [{ type: 'text', text: '<img src=x onerror=alert(1)> and <script>alert(2)</script>' }]);
  assert.equal(blocks[1].text, '<b>x</b>');
});

test('only absolute http(s) links get a target; any other scheme stays text', () => {
  const [good, bad] = parseInline('[df](https://man7.org/df.html) [x](javascript:window.x=1)').filter((part) => part.type === 'link');
  assert.equal(good.href, 'https://man7.org/df.html');
  assert.equal(bad.href, null);
  assert.equal(bad.target, 'javascript:window.x=1');
  assert.equal(safeHref('data:text/html,<b>'), null);
  assert.equal(safeHref('//evil.example/x'), null);
  assert.equal(safeHref('HTTP://Example.org/a'), 'http://example.org/a');
});

test('an answer cut mid-stream still reads: an open fence is code, an open emphasis is text', () => {
  assert.deepEqual(parseMarkdown('```\nstill coming').map((block) => block.type), ['code']);
  assert.deepEqual(parseInline('**not closed yet'), [{ type: 'text', text: '**not closed yet' }]);
});
