// Overview: readiness of each component (its state since when, and its last failure), the
// active model, and live figures from /metrics (requests and tokens per second, queue, cache
// memory, time to first token and inter-token latency), scraped every few seconds and drawn
// over the session as small charts, with the service-level attainment per tier and class and
// its alert banner (overview_slo.js), and the dashboards over a chosen range from the history
// the appliance keeps (overview_history.js).

import {get} from '../api.js';
import {lineChart} from '../chart.js';
import {figures, history, parsePrometheus, remember} from '../metrics.js';
import {errorLine, formatBytes, formatNumber, formatSeconds, h, replace} from '../dom.js';
import {historySection} from './overview_history.js';
import {componentLines} from './overview_readiness.js';
import {sloPanel} from './overview_slo.js';

export const POLL_MS = 3000;
// Polling keeps the session in use, so it stops when nobody is looking: while the tab is
// hidden, and after this long without a key press or pointer move (the session's idle
// timeout then applies as it should).
const IDLE_PAUSE_MS = 10 * 60 * 1000;

// Scrapes survive leaving the screen, so that rates resume from the last one.
let lastScrape = null;

async function readiness() {
  const res = await get('/readyz', {as: 'response'});
  return res.json();  // 200 and 503 both carry the component list
}

function readinessPanel(ready) {
  const rows = componentLines(ready.components).map((c) =>
    h('li', {class: c.ready ? 'ok' : 'bad', dataset: {component: c.name}}, h('strong', {}, c.name), ' ', c.state,
      c.detail ? ': ' + c.detail : '',
      c.lastFailure ? h('div', {class: 'detail last-failure'}, c.lastFailure) : null));
  return h('section', {class: 'card', 'aria-labelledby': 'ready-title'},
           h('h2', {id: 'ready-title'}, 'Readiness'),
           h('p', {id: 'readiness', class: ready.status === 'ready' ? 'ok' : 'bad'},
             ready.status === 'ready' ? 'Ready' : 'Not ready'),
           h('ul', {class: 'components'}, rows));
}

function modelPanel(ready, served, store) {
  const model = (ready.components || {}).model;
  const active = store ? (store.models || []).filter((m) => m.state === 'active') : [];
  return h('section', {class: 'card', 'aria-labelledby': 'model-title'},
           h('h2', {id: 'model-title'}, 'Active model'),
           h('p', {id: 'active-model'}, served.length ? served.join(', ') : 'none served'),
           model && model.detail ? h('p', {class: 'detail'}, model.detail) : null,
           active.map((m) => h('p', {class: 'detail'}, 'Version ', m.version || '?', ', digest ',
                                 h('code', {}, (m.digest || '').slice(0, 16)), ', signed by ', m.signer || '?')));
}

function tile(title, text, chart) {
  return h('section', {class: 'card tile'}, h('h2', {}, title), h('p', {class: 'figure'}, text), chart);
}

function series(key) {
  return history.map((p) => p[key]);
}

function latencyTile(title, prefix, latest) {
  if (!latest || !latest[prefix + 'Reported']) {
    return tile(title, 'not reported by this appliance', null);
  }
  const text = 'median ' + formatSeconds(latest[prefix + 'P50']) + ' · p99 ' + formatSeconds(latest[prefix + 'P99']);
  return tile(title, text, lineChart([{values: series(prefix + 'P50'), className: 'median'},
                                      {values: series(prefix + 'P99'), className: 'tail'}],
                                     title + ': median and p99 over this session'));
}

function figuresPanel(latest) {
  if (!latest) return h('p', {class: 'detail'}, 'Collecting figures…');
  const queue = latest.queued === null ? '–' : latest.queued + ' waiting, ' + latest.running + ' running';
  const memory = latest.memoryUsed === null ? '–'
      : formatBytes(latest.memoryUsed) + ' of ' + formatBytes(latest.memoryBudget) +
        (latest.prefixCacheBytes ? ' (prefix cache ' + formatBytes(latest.prefixCacheBytes) + ')' : '');
  return h('div', {class: 'tiles', id: 'figures'},
           tile('Requests per second', formatNumber(latest.requestRate),
                lineChart([{values: series('requestRate'), className: 'median'}], 'Requests per second')),
           tile('Tokens per second', formatNumber(latest.tokenRate),
                lineChart([{values: series('tokenRate'), className: 'median'}], 'Generated tokens per second')),
           tile('Queue', queue, lineChart([{values: series('queued'), className: 'median'}], 'Requests waiting')),
           tile('Cache memory', memory, lineChart([{values: series('memoryUsed'), className: 'median'}],
                                                  'Sequence-state memory used')),
           latencyTile('Time to first token', 'ttft', latest),
           latencyTile('Inter-token latency', 'itl', latest));
}

async function scrape() {
  const families = parsePrometheus(await get('/metrics', {as: 'text'}));
  const now = performance.now();
  const dt = lastScrape ? (now - lastScrape.at) / 1000 : 0;
  const point = figures(families, lastScrape ? lastScrape.families : null, dt);
  lastScrape = {at: now, families};
  if (dt > 0) remember(point);
  return {point, families, at: now};
}

export function render(container, {principal}) {
  const readyBox = h('div', {});
  const metricsBox = h('div', {});
  const mayReadMetrics = principal.role !== 'user';
  const dashboards = mayReadMetrics ? historySection() : null;
  container.append(h('div', {class: 'columns'}, readyBox), metricsBox, dashboards ? dashboards.element : null);
  // The model store (digests, sources, signers) and readiness details are not the user's.
  const mayReadStore = principal.role !== 'user';
  const paused = h('p', {class: 'notice-inline', role: 'status', hidden: true},
                   'Live figures paused while the console is idle; move the pointer or press a key to resume.');
  container.prepend(paused);
  let stopped = false;
  let timer = null;
  let lastActivity = Date.now();
  const idle = () => document.hidden || Date.now() - lastActivity > IDLE_PAUSE_MS;
  const wake = () => {
    lastActivity = Date.now();
    if (paused.hidden || document.hidden || stopped) return;
    paused.hidden = true;
    refresh();
  };
  const activity = ['keydown', 'pointermove', 'pointerdown', 'visibilitychange'];
  for (const name of activity) document.addEventListener(name, wake);

  async function refresh() {
    clearTimeout(timer);
    if (idle()) {
      paused.hidden = false;
      return;
    }
    // The history loads alongside this round's other reads (it refreshes itself at most every
    // 10 s), so a round takes no longer than its slowest read.
    const historyLoaded = dashboards ? dashboards.refresh() : null;
    try {
      const [ready, served, store] = await Promise.all([
        readiness(),
        get('/v1/models').then((r) => (r.data || []).map((m) => m.id)).catch(() => []),
        mayReadStore ? get('/admin/v1/models').catch(() => null) : null]);
      if (stopped) return;
      replace(readyBox, h('div', {class: 'columns'}, readinessPanel(ready), modelPanel(ready, served, store)));
    } catch (e) {
      if (!stopped) replace(readyBox, errorLine(e, 'Readiness'));
    }
    if (mayReadMetrics) {
      try {
        const latest = await scrape();
        if (!stopped) {
          replace(metricsBox, sloPanel(latest.families, latest.at),
                  figuresPanel(history.length ? latest.point : null));
        }
      } catch (e) {
        if (!stopped) replace(metricsBox, errorLine(e, 'Metrics'));
      }
    }
    await historyLoaded;
    if (!stopped) timer = setTimeout(refresh, POLL_MS);
  }

  refresh();
  return () => {
    stopped = true;
    clearTimeout(timer);
    for (const name of activity) document.removeEventListener(name, wake);
  };
}
