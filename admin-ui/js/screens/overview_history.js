// The overview's dashboards: the appliance's figures over a time range the operator picks
// (15 minutes to 24 hours), from the history the daemon keeps (GET /admin/v1/metrics/history),
// so that they survive a reload and a new sign-in: requests and tokens per second, error rate,
// time to first token, inter-token and end-to-end latency percentiles, queue and cache memory,
// each a chart with axes, units and a legend; and a breakdown per served model over the range.
// historyCharts and modelBreakdown are pure (node's test runner covers them); the chosen range
// is kept here, so that leaving the overview keeps it.

import {get} from '../api.js';
import {formatValue, timeChart} from '../chart.js';
import {errorLine, h, replace} from '../dom.js';

export const RANGES = [['15m', '15 min'], ['1h', '1 hour'], ['6h', '6 hours'], ['24h', '24 hours']];
// The history's points are 10 s apart at best: asking more often than this shows nothing new.
export const REFRESH_MS = 10000;

let range = '1h';

const percentiles = (key) => (points) => [
  {name: 'p50', points: points.map((p) => [p.time_ms, p[key].p50])},
  {name: 'p90', points: points.map((p) => [p.time_ms, p[key].p90])},
  {name: 'p99', points: points.map((p) => [p.time_ms, p[key].p99])}];

// The models named anywhere in the range, by name.
function modelNames(points) {
  return [...new Set(points.flatMap((p) => p.models.map((m) => m.model)))].sort();
}

// A model's value at each point; 0 where it had no request in that interval.
function perModel(points, model, read) {
  return points.map((p) => {
    const m = p.models.find((x) => x.model === model);
    return [p.time_ms, m ? read(m) : 0];
  });
}

// The charts of one history reply: [{id, title, unit, unitLabel, from, to, maxGap, series}].
export function historyCharts(history) {
  const points = history.points;
  const from = history.now_ms - history.range_s * 1000;
  const frame = {from, to: history.now_ms, maxGap: history.resolution_s * 1000 * 2.5};
  const line = (name, key) => ({name, points: points.map((p) => [p.time_ms, p[key]])});
  const models = modelNames(points);
  return [
    {id: 'requests', title: 'Requests per second', unit: '', unitLabel: 'requests/s',
     series: [line('all models', 'requests_per_s'),
              ...(models.length > 1 ? models.map((m) => ({name: m, points: perModel(points, m, (x) => x.requests_per_s)}))
                                    : [])]},
    {id: 'tokens', title: 'Generated tokens per second', unit: '', unitLabel: 'tokens/s',
     series: [line('generated', 'tokens_per_s')]},
    {id: 'errors', title: 'Error rate (5xx answers)', unit: 'share', unitLabel: '% of requests',
     series: [line('all models', 'error_rate')]},
    {id: 'ttft', title: 'Time to first token', unit: 's', unitLabel: 'seconds', series: percentiles('ttft_s')(points)},
    {id: 'itl', title: 'Inter-token latency', unit: 's', unitLabel: 'seconds', series: percentiles('itl_s')(points)},
    {id: 'e2e', title: 'End-to-end request latency', unit: 's', unitLabel: 'seconds',
     series: percentiles('e2e_s')(points)},
    {id: 'queue', title: 'Engine queue', unit: '', unitLabel: 'requests',
     series: [line('waiting', 'queued'), line('running', 'running')]},
    {id: 'memory', title: 'Cache memory', unit: 'bytes', unitLabel: 'bytes',
     series: [line('used', 'memory_used_bytes'), line('budget', 'memory_budget_bytes')]},
  ].map((chart) => ({...chart, ...frame}));
}

// Per served model over the range: [{model, requests, rate (per second over the range),
// errorRate (null without requests), worstP99 (the highest interval p99; null without any)}].
export function modelBreakdown(history) {
  const seconds = history.points.reduce((total, p) => total + p.seconds, 0);
  return modelNames(history.points).map((model) => {
    const mine = history.points.flatMap((p) => p.models.filter((m) => m.model === model));
    const requests = mine.reduce((total, m) => total + m.requests, 0);
    const errors = mine.reduce((total, m) => total + (m.error_rate || 0) * m.requests, 0);
    const p99s = mine.map((m) => m.latency_s.p99).filter((v) => v !== null);
    return {model, requests, rate: seconds > 0 ? requests / seconds : 0,
            errorRate: requests > 0 ? errors / requests : null, worstP99: p99s.length ? Math.max(...p99s) : null};
  });
}

function breakdownTable(rows) {
  if (!rows.length) return h('p', {class: 'detail', id: 'history-models'}, 'No request for a model in this range.');
  const cell = (text) => h('td', {}, text);
  return h('table', {class: 'numbers', id: 'history-models'},
           h('caption', {}, 'Per model over the range'),
           h('thead', {}, h('tr', {}, ['Model', 'Requests', 'Requests/s', 'Error rate', 'Worst p99 latency']
               .map((c) => h('th', {scope: 'col'}, c)))),
           h('tbody', {}, rows.map((r) => h('tr', {dataset: {model: r.model}},
               h('th', {scope: 'row'}, r.model), cell(r.requests.toLocaleString('en')), cell(formatValue(r.rate, '')),
               cell(formatValue(r.errorRate, 'share')), cell(formatValue(r.worstP99, 's'))))));
}

// The dashboards section; it loads the history itself. Returns {element, refresh(force)}.
export function historySection() {
  const body = h('div', {class: 'history-body'}, h('p', {class: 'detail'}, 'Loading the history…'));
  const status = h('p', {class: 'detail', id: 'history-status', role: 'status'});
  const buttons = RANGES.map(([value, label]) => {
    const button = h('button', {type: 'button', dataset: {range: value}, 'aria-pressed': String(value === range)}, label);
    button.addEventListener('click', () => {
      range = value;
      for (const b of buttons) b.setAttribute('aria-pressed', String(b.dataset.range === range));
      refresh(true);
    });
    return button;
  });
  const element = h('section', {class: 'card', id: 'history', 'aria-labelledby': 'history-title'},
                    h('div', {class: 'history-head'},
                      h('h2', {id: 'history-title'}, 'History'),
                      h('div', {role: 'group', 'aria-label': 'Time range', id: 'history-range', class: 'actions'}, buttons)),
                    status, body);
  let last = 0;
  let shown = null;
  async function refresh(force = false) {
    if (!force && shown === range && Date.now() - last < REFRESH_MS) return;
    const asked = range;
    last = Date.now();
    let history;
    try {
      history = await get('/admin/v1/metrics/history', {query: {range: asked}});
    } catch (e) {
      body.replaceChildren(errorLine(e, 'History'));
      return;
    }
    if (asked !== range) return;  // a newer choice is on its way
    shown = asked;
    element.dataset.range = history.range;
    replace(status, history.points.length + ' points of ' + history.resolution_s + ' s kept by the appliance, ' +
                    'up to ' + history.now.replace('T', ' ').replace(/\.\d+Z$/, ' UTC'));
    body.replaceChildren(h('div', {class: 'history-charts'}, historyCharts(history).map((spec) => timeChart(spec))),
                         breakdownTable(modelBreakdown(history)));
  }
  return {element, refresh};
}
