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

  function render(alerts) {
    const shown = alerts.filter((alert) => !host || alert.labels?.instance === host);
    section.hidden = shown.length === 0;
    const firing = shown.filter((alert) => alert.state === 'firing').length;
    setText(title, 'Alerts: ' + firing + ' firing' + (shown.length > firing ? ', ' + (shown.length - firing) + ' pending' : ''));
    list.replaceChildren(
      ...shown.map((alert) => {
        const labels = alert.labels || {};
        const where = labels.instance || '';
        const subject = labels.mountpoint || labels.device || labels.cpu || '';
        const summary = alert.annotations?.summary || alert.annotations?.description || '';
        return el(
          'li',
          { class: 'alert', 'data-state': alert.state, 'data-alertname': labels.alertname || '', 'data-severity': labels.severity || '' },
          el('span', { class: 'alert-state', text: alert.state }),
          el('strong', { text: labels.alertname || '' }),
          where && !host ? el('a', { href: route('host', where), text: where }) : null,
          subject ? el('span', { class: 'note', text: subject }) : null,
          el('span', { class: 'alert-summary', text: summary }),
          el('span', { class: 'note', text: 'since ' + f.time(new Date(alert.activeAt)) }),
        );
      }),
    );
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

  // Moves come in bursts (a tick of the fleet): one read after the burst.
  const soon = () => {
    if (!timer) timer = setTimeout(load, 300);
  };
  const unsubscribe = [context.feed.on('alert', soon), context.feed.on('reset', soon)];
  load();
  return () => {
    abort.abort();
    clearTimeout(timer);
    for (const off of unsubscribe) off();
  };
}
