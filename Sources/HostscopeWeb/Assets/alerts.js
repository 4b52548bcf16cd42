// The Fleet screen's Alerts list: the firing and pending alerts of serve's rules (`/api/v1/alerts`), kept live
// by the `alert` events. Every string (names, hosts, summaries from templates over host text) goes in as text.
import { APIError, AuthError, getJSON } from './api.js';
import { el, setText } from './dom.js';

/** An alert's identity: its labels, sorted (as the server's fingerprint). */
function identity(labels) {
  return Object.keys(labels)
    .sort()
    .map((name) => name + '=' + labels[name])
    .join(',');
}

/** Firing first, then the oldest. */
function order(a, b) {
  if (a.state !== b.state) return a.state === 'firing' ? -1 : 1;
  return String(a.activeAt).localeCompare(String(b.activeAt));
}

/** Mounts the list at the end of `root`; returns the function that takes it down. */
export function mountAlerts(root, context) {
  const abort = new AbortController();
  const alerts = new Map();
  const list = el('ul', { class: 'alerts', id: 'alerts' });
  const note = el('p', { class: 'note' });
  root.append(el('section', { 'aria-label': 'Alerts' }, el('h2', { text: 'Alerts' }), note, list));

  function render() {
    const shown = [...alerts.values()].sort(order);
    list.replaceChildren(
      ...shown.map((alert) => {
        const labels = alert.labels || {};
        const device = labels.mountpoint || labels.device || '';
        const summary = alert.annotations?.summary || alert.annotations?.description || '';
        return el(
          'li',
          { class: 'alert-' + alert.state, 'data-alertname': labels.alertname, 'data-state': alert.state },
          el('strong', { text: alert.state + ' ' + (labels.alertname || '') }),
          ' ',
          el('span', { text: [labels.instance, device, labels.severity && '(' + labels.severity + ')'].filter(Boolean).join(' ') }),
          summary ? el('span', { class: 'alert-summary', text: ': ' + summary }) : null,
        );
      }),
    );
    setText(note, shown.length ? '' : 'No firing or pending alerts.');
  }

  async function load() {
    try {
      const answer = await getJSON('/api/v1/alerts', abort.signal);
      alerts.clear();
      for (const alert of answer.data?.alerts || []) alerts.set(identity(alert.labels || {}), alert);
      render();
    } catch (error) {
      if (error.name === 'AbortError') return;
      if (error instanceof AuthError) context.unauthorized(error.message);
      else setText(note, error instanceof APIError ? error.message : String(error));
    }
  }

  const unsubscribe = [
    context.feed.on('alert', (move) => {
      const key = identity(move.labels || {});
      if (move.to === 'pending' || move.to === 'firing') {
        const activeAt = alerts.get(key)?.activeAt || move.at;
        alerts.set(key, { labels: move.labels, annotations: move.annotations, state: move.to, activeAt });
      } else {
        alerts.delete(key);
      }
      render();
    }),
    context.feed.on('reset', () => load()),
  ];
  load();

  return () => {
    abort.abort();
    for (const off of unsubscribe) off();
  };
}
