// A small Markdown subset for the chat's answers, read into plain objects that the page turns into DOM nodes with
// textContent only: paragraphs, headings, fenced code, lists, `code`, **strong**, *emphasis* and links whose
// target is http(s) (any other target is shown as text). Raw HTML in the text stays text: nothing here makes markup.

/** The blocks of `text`: {type: 'p'|'h'|'code'|'ul'|'ol', ...}; inline parts are {type: 'text'|'code'|'strong'|'em'|'link'}. */
export function parseMarkdown(text) {
  const lines = String(text).replace(/\r\n?/g, '\n').split('\n');
  const blocks = [];
  let paragraph = [];
  let list = null;
  const flushParagraph = () => {
    if (paragraph.length) blocks.push({ type: 'p', inline: parseInline(paragraph.join('\n')) });
    paragraph = [];
  };
  const flushList = () => {
    if (list) blocks.push(list);
    list = null;
  };
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index];
    const fence = line.match(/^\s*(```|~~~)\s*([\w+-]*)\s*$/);
    if (fence) {
      flushParagraph();
      flushList();
      const body = [];
      index++;
      while (index < lines.length && !lines[index].trim().startsWith(fence[1])) body.push(lines[index++]);
      blocks.push({ type: 'code', language: fence[2] || '', text: body.join('\n') });
      continue;
    }
    const heading = line.match(/^(#{1,6})\s+(.*)$/);
    if (heading) {
      flushParagraph();
      flushList();
      blocks.push({ type: 'h', level: heading[1].length, inline: parseInline(heading[2].trim()) });
      continue;
    }
    const item = line.match(/^\s*(?:([-*+])|(\d{1,9})[.)])\s+(.*)$/);
    if (item) {
      flushParagraph();
      const type = item[1] ? 'ul' : 'ol';
      if (!list || list.type !== type) {
        flushList();
        list = { type, start: item[2] ? Number(item[2]) : 1, items: [] };
      }
      list.items.push(parseInline(item[3]));
      continue;
    }
    if (line.trim() === '') {
      flushParagraph();
      flushList();
      continue;
    }
    if (list && /^\s{2,}\S/.test(line)) {
      // A continuation line of the last item.
      const last = list.items[list.items.length - 1];
      last.push({ type: 'text', text: ' ' }, ...parseInline(line.trim()));
      continue;
    }
    flushList();
    paragraph.push(line);
  }
  flushParagraph();
  flushList();
  return blocks;
}

/** The inline parts of `text`: code spans first (their content is literal), then links, strong and emphasis. */
export function parseInline(text) {
  const parts = [];
  let rest = String(text);
  const pattern = /`([^`]+)`|\[([^\]]+)\]\(([^)\s]+)\)|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|_([^_\s][^_]*)_/;
  while (rest) {
    const match = rest.match(pattern);
    if (!match) {
      parts.push({ type: 'text', text: rest });
      break;
    }
    if (match.index > 0) parts.push({ type: 'text', text: rest.slice(0, match.index) });
    if (match[1] !== undefined) parts.push({ type: 'code', text: match[1] });
    else if (match[2] !== undefined) parts.push({ type: 'link', href: safeHref(match[3]), target: match[3], children: parseInline(match[2]) });
    else if (match[4] !== undefined || match[5] !== undefined) parts.push({ type: 'strong', children: parseInline(match[4] ?? match[5]) });
    else parts.push({ type: 'em', children: parseInline(match[6] ?? match[7]) });
    rest = rest.slice(match.index + match[0].length);
  }
  return parts;
}

/** `url` when it is an absolute http(s) URL, else null (javascript:, data:, relative and odd forms are text). */
export function safeHref(url) {
  if (!/^https?:\/\/[^\s/]/i.test(url)) return null;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.href : null;
  } catch {
    return null;
  }
}
