// Unit tests of the charts' pure arithmetic (admin-ui/js/chart.js) and of the overview's
// dashboards reading the history reply (admin-ui/js/screens/overview_history.js), run by
// node's own test runner.
import assert from 'node:assert/strict';
import test from 'node:test';

import {formatClock, formatValue, niceTicks, seriesRuns, timeTicks} from '../../admin-ui/js/chart.js';
import {historyCharts, modelBreakdown} from '../../admin-ui/js/screens/overview_history.js';

test('value ticks are round steps from zero that reach the maximum', () => {
  assert.deepEqual(niceTicks(7.3), [0, 2, 4, 6, 8]);
  assert.deepEqual(niceTicks(0.031), [0, 0.01, 0.02, 0.03, 0.04]);
  assert.deepEqual(niceTicks(1000), [0, 500, 1000]);
  assert.equal(niceTicks(1000).at(-1) >= 1000, true);
  assert.deepEqual(niceTicks(0), [0, 1], 'an empty chart still has an axis');
  assert.deepEqual(niceTicks(NaN), [0, 1]);
});

test('time ticks fall on whole minutes or hours inside the range', () => {
  const from = Date.UTC(2026, 11, 1, 10, 3, 20);
  const quarter = timeTicks(from, from + 15 * 60000);
  assert.deepEqual(quarter.map(formatClock), ['10:05', '10:10', '10:15']);
  const day = timeTicks(from, from + 24 * 3600000);
  assert.ok(day.length >= 4 && day.length <= 5, String(day.length));
  assert.ok(day.every((t) => t % (3600000) === 0));
  assert.deepEqual(timeTicks(from, from), []);
});

test('values carry their unit', () => {
  assert.equal(formatValue(0.0123, 's'), '12.3 ms');
  assert.equal(formatValue(2.5, 's'), '2.5 s');
  assert.equal(formatValue(0.0005, 'share'), '0.05%');
  assert.equal(formatValue(3 * 1024 * 1024, 'bytes'), '3 MiB');
  assert.equal(formatValue(1234.4, ''), '1234');
  assert.equal(formatValue(null, 's'), '–');
});

test('a line breaks where a value is missing or a point is missing', () => {
  const runs = seriesRuns([[0, 1], [10, 2], [20, null], [30, 3], [40, 4], [100, 5]], 25);
  assert.deepEqual(runs, [[[0, 1], [10, 2]], [[30, 3], [40, 4]], [[100, 5]]]);
});

function reply() {
  const point = (t, requests, models) => ({
    time_ms: t, seconds: 10, requests, requests_per_s: requests / 10, tokens_per_s: 5, error_rate: requests ? 0.1 : null,
    ttft_s: {p50: 0.1, p90: 0.2, p99: 0.3}, itl_s: {p50: null, p90: null, p99: null},
    e2e_s: {p50: 1, p90: 2, p99: 3}, queued: 1, running: 2, memory_used_bytes: 10, memory_budget_bytes: 100, models});
  return {range: '15m', range_s: 900, resolution_s: 10, now_ms: 1000000, points: [
    point(980000, 10, [{model: 'a', requests: 8, requests_per_s: 0.8, error_rate: 0.25, latency_s: {p50: 1, p90: 2, p99: 3}},
                       {model: 'b', requests: 2, requests_per_s: 0.2, error_rate: 0, latency_s: {p50: 1, p90: 1, p99: 1}}]),
    point(990000, 0, []),
    point(1000000, 4, [{model: 'a', requests: 4, requests_per_s: 0.4, error_rate: 0, latency_s: {p50: 4, p90: 5, p99: 6}}]),
  ]};
}

test('the dashboards draw each figure over the whole range, with one line per model', () => {
  const charts = historyCharts(reply());
  assert.deepEqual(charts.map((c) => c.id), ['requests', 'tokens', 'errors', 'ttft', 'itl', 'e2e', 'queue', 'memory']);
  const requests = charts[0];
  assert.equal(requests.from, 100000);
  assert.equal(requests.to, 1000000);
  assert.deepEqual(requests.series.map((s) => s.name), ['all models', 'a', 'b']);
  assert.deepEqual(requests.series[2].points.map((p) => p[1]), [0.2, 0, 0]);
  assert.deepEqual(charts[3].series.map((s) => s.name), ['p50', 'p90', 'p99']);
  assert.equal(charts[2].unit, 'share');
});

test('the per-model breakdown sums the range', () => {
  const rows = modelBreakdown(reply());
  assert.deepEqual(rows.map((r) => r.model), ['a', 'b']);
  assert.equal(rows[0].requests, 12);
  assert.equal(rows[0].rate, 12 / 30);
  assert.equal(rows[0].errorRate, 2 / 12);
  assert.equal(rows[0].worstP99, 6);
  assert.equal(rows[1].errorRate, 0);
});
