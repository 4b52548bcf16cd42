// The Files screen (`#/files/HOST?path=/srv/app/log.txt&line=12&tree=/srv&open=/srv/app`): a tree under the
// roots serve allows, with breadcrumbs, whose listed directory (`tree`, empty for the roots) and expanded folders
// (`open`, repeated) are kept in the URL and in the tab's session, so a reload, a shared link or a way back through
// another screen reopens the same tree; a preview with line numbers (a hex summary for a binary file, the last lines of a large one, a
// live tail on demand); grep and find whose results link to the line; a download through fetch, so the token
// stays in a header. Every name and every line is set as text.

import { APIError, AuthError, getJSON, getStream, readLines } from './api.js';
import { download, el, route, setText } from './dom.js';
import * as f from './format.js';

const MAX_TAIL_LINES = 5000;
const LAST_KEY = 'hostscope.files.last';

/** The URL of the Files screen as this tab last showed it (its tree and file), or the screen's own. */
export function lastLink() {
  try {
    return sessionStorage.getItem(LAST_KEY) || route('files');
  } catch {
    return route('files');
  }
}

export function mount(root, context, hostName) {
  const abort = new AbortController();
  const signal = abort.signal;
  let following = null;
  const note = el('p', { class: 'note', role: 'status' });
  const hostSelect = el('select', { 'aria-label': 'Host' });
  const crumbs = el('nav', { class: 'crumbs', 'aria-label': 'Path' });
  const tree = el('ul', { class: 'tree', role: 'tree', 'aria-label': 'Files' });
  const head = el('div', { class: 'preview-head' });
  const code = el('div', { class: 'code', tabindex: '0', 'aria-label': 'Preview' });
  const pattern = el('input', { type: 'search', placeholder: 'pattern or name', 'aria-label': 'Search', 'data-filter': true, required: true });
  const mode = el('select', { 'aria-label': 'Search with' }, el('option', { value: 'grep', text: 'grep' }), el('option', { value: 'find', text: 'find name' }));
  const caseBox = el('input', { type: 'checkbox', id: 'files-icase' });
  const results = el('ol', { class: 'results' });
  const searchForm = el('form', { class: 'toolbar' }, pattern, mode, el('label', { for: 'files-icase' }, caseBox, ' ignore case'), el('button', { type: 'submit', text: 'Search' }));
  const panes = el('div', { class: 'files' },
    el('section', { class: 'tree-pane', 'aria-label': 'Tree' }, tree),
    el('section', { class: 'preview-pane', 'aria-label': 'Preview' }, head, code, searchForm, results));
  root.append(el('div', { class: 'toolbar' }, el('h1', { text: 'Files' }), hostSelect, crumbs), note, panes);

  const params = context.params;
  const path = params.get('path') || '';
  let roots = [];
  const line = Number(params.get('line')) || 0;
  // The directory the tree lists ('' for the roots; null: the path's own, or its parent's for a file).
  let base = params.get('tree');
  const opened = new Set(params.getAll('open'));
  const api = (what, query) => '/api/v1/files/' + encodeURIComponent(hostName) + '/' + what + '?' + new URLSearchParams(query);
  const link = (target, number) => route('files', hostName) + '?' + new URLSearchParams(number ? { path: target, line: number } : { path: target });
  /** A file's link that keeps the tree as it is shown: its directory and expanded folders. */
  const fileLink = (target, number) => route('files', hostName) + '?' + state(target, number);
  const state = (target, number) => {
    const query = new URLSearchParams(target ? { path: target } : {});
    if (number) query.set('line', number);
    if (base != null) query.set('tree', base);
    for (const dir of opened) query.append('open', dir);
    return query;
  };
  /** Writes the expanded folders into the URL (no history entry) and the tab's session. */
  const remember = () => {
    if (signal.aborted) return; // the screen was left: the URL is another screen's now
    context.setParams(state(path, line));
    try {
      sessionStorage.setItem(LAST_KEY, location.hash);
    } catch {
      // A browser without session storage keeps the tree in the URL only.
    }
  };
  const fail = (error, node = note) => {
    if (error.name === 'AbortError') return;
    if (error instanceof AuthError) context.unauthorized(error.message);
    else setText(node, error instanceof APIError ? error.message : String(error));
  };

  /** One row of the tree: a directory expands in place, a file opens its preview. */
  function row(entry, depth) {
    const isDir = entry.type === 'dir';
    const item = el('li', { role: 'treeitem', 'data-path': entry.path });
    const label = el('a', { href: isDir ? link(entry.path) : fileLink(entry.path), class: 'entry', 'data-type': entry.type, text: entry.name + (isDir ? '/' : '') });
    if (!isDir) label.dataset.file = entry.path;
    label.dataset.depth = String(depth);
    item.append(label);
    if (entry.type === 'dir') {
      item.setAttribute('aria-expanded', 'false');
      const toggle = el('button', { type: 'button', class: 'link toggle', 'aria-label': 'Expand ' + entry.name, text: '▸' });
      toggle.addEventListener('click', () => expand(item, entry.path, depth + 1, toggle));
      item.prepend(toggle);
    } else {
      item.append(el('span', { class: 'size', text: entry.size == null ? '' : f.bytes(entry.size) }));
    }
    return item;
  }

  async function expand(item, dir, depth, toggle) {
    const open = item.getAttribute('aria-expanded') === 'true';
    item.setAttribute('aria-expanded', String(!open));
    setText(toggle, open ? '▸' : '▾');
    const existing = item.querySelector(':scope > ul');
    if (open) {
      if (existing) existing.remove();
      for (const other of [...opened]) if (other === dir || other.startsWith(dir.replace(/\/$/, '') + '/')) opened.delete(other);
      remember();
      return;
    }
    opened.add(dir);
    remember();
    const group = el('ul', { role: 'group' });
    item.append(group);
    await fill(group, dir, depth, 0);
  }

  /** A directory's entries, one page (500) at a time: a "more" button reads the next. */
  async function fill(list, dir, depth, offset) {
    try {
      const page = await getJSON(api('list', { path: dir, offset, limit: 500 }), signal);
      list.append(...page.entries.map((entry) => row(entry, depth)));
      if (page.next_offset != null) {
        const more = el('button', { type: 'button', class: 'link', text: 'more (' + (page.total - page.next_offset) + ' left)' });
        more.addEventListener('click', () => {
          more.remove();
          fill(list, dir, depth, page.next_offset);
        });
        list.append(el('li', {}, more));
      }
      return page;
    } catch (error) {
      list.append(el('li', { class: 'error', text: error.message }));
      fail(error);
      return null;
    }
  }

  function breadcrumbs(target, roots) {
    const rootOf = roots.filter((r) => target === r || target.startsWith(r.replace(/\/$/, '') + '/')).sort((a, b) => b.length - a.length)[0];
    const parts = [el('a', { href: route('files', hostName), text: 'roots' })];
    if (rootOf) {
      parts.push(' / ', el('a', { href: link(rootOf), text: rootOf }));
      let at = rootOf.replace(/\/$/, '');
      for (const name of target.slice(at.length).split('/').filter(Boolean)) {
        at += '/' + name;
        parts.push(' / ', el('a', { href: link(at), text: name }));
      }
    }
    crumbs.replaceChildren(...parts);
  }

  /** The preview: numbered lines, or a hex summary, with the file's size and what part is shown. */
  async function preview(target) {
    stopFollowing();
    setText(head, 'Reading ' + target + '…');
    code.replaceChildren();
    try {
      const query = { path: target };
      if (line) query.line = line;
      const shown = await getJSON(api('preview', query), signal);
      const follow = el('button', { type: 'button', 'aria-pressed': 'false', text: 'Follow' });
      follow.addEventListener('click', () => (following ? stopFollowing() : startFollowing(target, follow)));
      const save = el('button', { type: 'button', text: 'Download' });
      save.addEventListener('click', () => downloadFile(target, save));
      const end = shown.offset + shown.length;
      let what = f.bytes(shown.size);
      if (shown.binary) what += ', binary' + (shown.type_guess ? ' (' + shown.type_guess + ')' : '') + ': the first bytes in hex';
      else if (shown.first_line == null) what += ', the last lines (bytes ' + shown.offset + '–' + end + ')';
      else if (shown.truncated || end < shown.size) what += ', bytes ' + shown.offset + '–' + end + ' shown';
      head.replaceChildren(el('strong', { text: shown.path }), el('span', { class: 'note', text: ' ' + what + ' ' }), follow, save);
      if (shown.binary) code.append(...shown.hex.map((text) => el('div', { class: 'line', text })));
      else lines(shown.text, shown.first_line);
      const target_line = line && code.querySelector('#L' + line);
      if (target_line) {
        target_line.classList.add('target');
        target_line.scrollIntoView({ block: 'center' });
      }
    } catch (error) {
      head.replaceChildren(el('span', { class: 'error', text: error.message }));
      fail(error, head.firstChild);
    }
  }

  /** Appends text as numbered lines (numbers only where the first line's number is known). */
  function lines(text, first) {
    const split = text.split('\n');
    if (split.length && split[split.length - 1] === '') split.pop();
    const rows = split.map((content, index) => {
      const number = first == null ? '' : String(first + index);
      return el('div', { class: 'line', id: number ? 'L' + number : null }, el('span', { class: 'n', text: number }), el('span', { class: 't', text: visible(content) }));
    });
    code.append(...rows);
    while (code.childElementCount > MAX_TAIL_LINES) code.firstElementChild.remove();
  }

  function startFollowing(target, button) {
    const controller = new AbortController();
    following = controller;
    button.setAttribute('aria-pressed', 'true');
    code.replaceChildren();
    (async () => {
      try {
        const response = await getStream(api('follow', { path: target, lines: 100 }), controller.signal);
        await readLines(response.body, (text) => {
          if (!text) return;
          const piece = JSON.parse(text);
          if (piece.text != null) {
            lines(piece.text, null);
            code.scrollTop = code.scrollHeight;
          } else if (piece.end) setText(note, piece.end);
        });
      } catch (error) {
        fail(error);
      } finally {
        if (following === controller) following = null;
        button.setAttribute('aria-pressed', 'false');
      }
    })();
  }

  function stopFollowing() {
    if (following) following.abort();
    following = null;
  }

  async function downloadFile(target, button) {
    button.disabled = true;
    setText(note, 'Downloading ' + target + '…');
    try {
      const response = await getStream(api('download', { path: target }), signal);
      const blob = await response.blob();
      download(target.split('/').pop() || 'download', 'application/octet-stream', blob);
      setText(note, 'Downloaded ' + target + ' (' + f.bytes(blob.size) + ').');
    } catch (error) {
      fail(error);
    } finally {
      button.disabled = false;
    }
  }

  searchForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    const where = path || roots[0] || '';
    const grep = mode.value === 'grep';
    const query = grep
      ? { path: where, pattern: pattern.value, ignore_case: String(caseBox.checked), limit: 200 }
      : { path: where, name: pattern.value, limit: 200 };
    setText(note, (grep ? 'Searching ' : 'Finding under ') + where + '…');
    try {
      const found = await getJSON(api(grep ? 'grep' : 'find', query), signal);
      const items = grep
        ? found.matches.map((match) => el('li', {}, el('a', { href: fileLink(match.path, match.line), 'data-file': match.path, 'data-line': match.line, text: match.path + ':' + match.line }), el('code', { text: ' ' + visible(match.text) })))
        : found.entries.map((entry) => el('li', {}, el('a', { href: link(entry.path), text: entry.path })));
      results.replaceChildren(...items);
      const count = items.length + (grep ? ' matching lines' : ' entries');
      setText(note, count + (found.complete ? '' : ' (stopped at the limit; narrow the search)') + (found.problems.length ? '; ' + found.problems.join('; ') : ''));
    } catch (error) {
      fail(error);
    }
  });

  // A file's link takes the tree as it is when followed (folders may have been expanded since it was made).
  panes.addEventListener('click', (event) => {
    const anchor = event.target.closest && event.target.closest('a[data-file]');
    if (anchor) anchor.href = fileLink(anchor.dataset.file, Number(anchor.dataset.line) || 0);
  });

  /** Expands again the folders the URL names, parents first; those no longer shown are forgotten. */
  async function reopen() {
    const wanted = [...opened].sort((a, b) => a.length - b.length);
    opened.clear();
    for (const dir of wanted) {
      const item = [...tree.querySelectorAll('li[aria-expanded="false"]')].find((node) => node.dataset.path === dir);
      const toggle = item && item.querySelector(':scope > button.toggle');
      if (!toggle) continue;
      const depth = Number(item.querySelector(':scope > a.entry').dataset.depth) + 1;
      await expand(item, dir, depth, toggle);
    }
  }

  tree.addEventListener('keydown', (event) => {
    if (event.key !== 'ArrowDown' && event.key !== 'ArrowUp') return;
    const items = [...tree.querySelectorAll('a.entry')];
    const index = items.indexOf(document.activeElement);
    const next = items[index + (event.key === 'ArrowDown' ? 1 : -1)];
    if (next) {
      event.preventDefault();
      next.focus();
    }
  });

  (async () => {
    let info;
    try {
      info = await getJSON('/api/v1/files', signal);
    } catch (error) {
      fail(error);
      return;
    }
    hostSelect.replaceChildren(...info.hosts.map((name) => el('option', { value: name, selected: name === hostName, text: name })));
    hostSelect.addEventListener('change', () => (location.hash = route('files', hostSelect.value)));
    if (!info.roots.length) {
      setText(note, 'This serve allows no files root, so no file can be read: restart serve with --files-root PATH (repeatable) naming the directories to browse.');
      return;
    }
    if (!hostName || !info.hosts.includes(hostName)) {
      if (info.hosts.length) location.replace(route('files', info.hosts[0]));
      else setText(note, 'serve watches no host over SSH, so there are no files to browse.');
      return;
    }
    roots = info.roots;
    breadcrumbs(path, roots);
    let chosen = null;
    let listed = null;
    if (base === '' || (base == null && !path)) {
      base = '';
      tree.append(...info.roots.map((r) => row({ name: r, path: r, type: 'dir' }, 0)));
      chosen = path || null;
    } else if (base != null) {
      if (!(await fill(tree, base, 0, 0))) return;
      chosen = path || null;
    } else {
      listed = await fill(tree, path, 0, 0);
      if (!listed) return;
      base = path;
      if (!listed.is_directory) {
        tree.replaceChildren();
        base = path.replace(/\/[^/]*$/, '') || '/';
        await fill(tree, base, 0, 0);
        chosen = path;
      }
    }
    await reopen();
    remember();
    if (chosen) {
      const current = [...tree.querySelectorAll('li')].find((item) => item.dataset.path === chosen);
      if (current) current.setAttribute('aria-selected', 'true');
      preview(chosen);
    } else if (listed) {
      setText(head, listed.total + ' entries in ' + path + '. Choose a file, or search under this directory.');
    } else {
      setText(head, 'Choose a file in the tree, or search under a directory.');
    }
  })();

  return () => {
    stopFollowing();
    abort.abort();
  };
}

/** Control characters (an ANSI escape's ESC among them) shown as their visible symbols, never acted on. */
export function visible(text) {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, (c) => String.fromCharCode(c === '\u007f' ? 0x2421 : 0x2400 + c.charCodeAt(0)));
}
