// The alerts of serve's rules (docs/alerts.md): a list above the fleet and on a host's page, from
// /api/v1/alerts, read again when an `alert` event says one moved.

import { APIError, AuthError, getJSON } from './api.js';
import { el, route, setText } from './dom.js';
import * as f from './format.js';

/**
 * Mounts the alert list into `root`: every pending and firing alert, or only those of `host`. Answers the
 * function that unmounts it.
 */
export function mountAlerts(root, context, host = null) {
  const abort = new AbortController();
  const list = el('ul', { class: 'alerts', id: 'alerts' });
  const title = el('h2', { text: 'Alerts' });
  const section = el('section', { class: 'alert-block', hidden: true, 'aria-live': 'polite' }, title, list);
  root.append(section);
  let timer = 0;

  // An item per alert, kept while the alert is listed (its labels say which it is) and changed only where it
  // changed: at 300 hosts serve lists hundreds, read again after every burst of `alert` events.
  const items = new Map();

  function makeItem(key, labels) {
    const where = labels.instance || '';
    const subject = labels.mountpoint || labels.device || labels.cpu || '';
    const item = {
      li: null,
      state: el('span', { class: 'alert-state' }),
      summary: el('span', { class: 'alert-summary' }),
      since: el('span', { class: 'note' }),
      activeAt: null,
    };
    item.li = el(
      'li',
      { class: 'alert', 'data-alertname': labels.alertname || '', 'data-severity': labels.severity || '', 'data-key': key },
      item.state,
      el('strong', { text: labels.alertname || '' }),
      where && !host ? el('a', { href: route('host', where), text: where }) : null,
      subject ? el('span', { class: 'note', text: subject }) : null,
      item.summary,
      item.since,
    );
    return item;
  }

  function render(alerts) {
    const shown = alerts.filter((alert) => !host || alert.labels?.instance === host);
    section.hidden = shown.length === 0;
    const firing = shown.filter((alert) => alert.state === 'firing').length;
    setText(title, 'Alerts: ' + firing + ' firing' + (shown.length > firing ? ', ' + (shown.length - firing) + ' pending' : ''));
    const listed = new Map();
    for (const alert of shown) {
      const labels = alert.labels || {};
      const key = JSON.stringify(Object.entries(labels).sort());
      const item = items.get(key) || makeItem(key, labels);
      listed.set(key, item);
      if (item.li.dataset.state !== alert.state) item.li.dataset.state = alert.state;
      setText(item.state, alert.state);
      setText(item.summary, alert.annotations?.summary || alert.annotations?.description || '');
      if (item.activeAt !== alert.activeAt) {
        item.activeAt = alert.activeAt;
        setText(item.since, 'since ' + f.time(new Date(alert.activeAt)));
      }
    }
    items.clear();
    for (const [key, item] of listed) items.set(key, item);
    // Items gone are removed and new ones inserted in place; the others are not moved (moving every item
    // would make the browser lay out and paint the whole list again).
    for (const li of [...list.children]) if (!listed.has(li.dataset.key)) li.remove();
    let at = list.firstElementChild;
    for (const item of listed.values()) {
      if (item.li === at) at = at.nextElementSibling;
      else list.insertBefore(item.li, at);
    }
  }

  async function load() {
    timer = 0;
    try {
      const answer = await getJSON('/api/v1/alerts', abort.signal);
      render(answer.data?.alerts || []);
    } catch (error) {
      if (error.name === 'AbortError') return;
      if (error instanceof AuthError) return context.unauthorized(error.message);
      // A serve with --no-alerts answers no list: the block stays hidden.
      if (!(error instanceof APIError)) console.warn('alerts:', error);
      section.hidden = true;
    }
  }

  // Moves come in bursts (a tick of the fleet), and at hundreds of hosts without a pause: one read a second at most.
  const soon = () => {
    if (!timer) timer = setTimeout(load, 1000);
  };
  const unsubscribe = [context.feed.on('alert', soon), context.feed.on('reset', soon)];
  load();
  return () => {
    abort.abort();
    clearTimeout(timer);
    for (const off of unsubscribe) off();
  };
}
