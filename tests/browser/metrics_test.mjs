// Unit tests of the console's /metrics reading (admin-ui/js/metrics.js), run by node's own
// test runner: the exposition parser, histogram quantiles and the overview's rates.
import assert from 'node:assert/strict';
import test from 'node:test';

import {bucketDelta, buckets, figures, parsePrometheus, quantile, value} from '../../admin-ui/js/metrics.js';

const SCRAPE_1 = `# HELP kimi_http_requests_total HTTP requests answered, by route and status code.
# TYPE kimi_http_requests_total counter
kimi_http_requests_total{route="chat_completions",code="200"} 10
kimi_http_requests_total{route="metrics",code="200"} 50
kimi_http_requests_total{route="admin_keys_list",code="200"} 7
# TYPE kimi_engine_tokens gauge
kimi_engine_tokens{kind="generated"} 100
kimi_engine_tokens{kind="prompt"} 900
# TYPE kimi_engine_requests gauge
kimi_engine_requests{state="waiting"} 2
kimi_engine_requests{state="running"} 3
# TYPE kimi_ttft_seconds histogram
kimi_ttft_seconds_bucket{le="0.1"} 0
kimi_ttft_seconds_bucket{le="0.2"} 0
kimi_ttft_seconds_bucket{le="+Inf"} 0
kimi_ttft_seconds_sum 0
kimi_ttft_seconds_count 0
`;

const SCRAPE_2 = SCRAPE_1.replace('route="chat_completions",code="200"} 10', 'route="chat_completions",code="200"} 16')
    .replace('route="metrics",code="200"} 50', 'route="metrics",code="200"} 90')
    .replace('{kind="generated"} 100', '{kind="generated"} 400')
    .replace('le="0.1"} 0', 'le="0.1"} 50').replace('le="0.2"} 0', 'le="0.2"} 100')
    .replace('le="+Inf"} 0', 'le="+Inf"} 100');

test('the parser reads families, labels and escaped values', () => {
  const families = parsePrometheus('# TYPE x gauge\nx{a="q\\"uote",b="two"} 1.5\ny 3\n');
  assert.equal(families.get('x').type, 'gauge');
  assert.deepEqual(families.get('x').samples[0].labels, {a: 'q"uote', b: 'two'});
  assert.equal(value(families, 'x', {b: 'two'}), 1.5);
  assert.equal(value(families, 'y'), 3);
  assert.equal(value(families, 'absent'), null);
});

test('quantiles interpolate inside their bucket and need observations', () => {
  const cumulative = [{le: 0.1, count: 50}, {le: 0.2, count: 100}, {le: Infinity, count: 100}];
  assert.equal(quantile(0.5, cumulative), 0.1);
  assert.ok(Math.abs(quantile(0.75, cumulative) - 0.15) < 1e-12);
  assert.equal(quantile(0.5, [{le: 1, count: 0}, {le: Infinity, count: 0}]), null);
  assert.equal(quantile(0.99, [{le: 1, count: 0}, {le: Infinity, count: 4}]), 1);
});

test('rates come from counter differences; the console\'s own polling is not counted', () => {
  const before = parsePrometheus(SCRAPE_1);
  const now = parsePrometheus(SCRAPE_2);
  const f = figures(now, before, 2);
  assert.equal(f.requestRate, 3);
  assert.equal(f.tokenRate, 150);
  assert.equal(f.queued, 2);
  assert.equal(f.running, 3);
  assert.equal(f.ttftReported, true);
  assert.equal(f.ttftP50, 0.1);
  assert.equal(f.itlReported, false);
  assert.deepEqual(bucketDelta(buckets(now, 'kimi_ttft_seconds'), buckets(before, 'kimi_ttft_seconds')).map((b) => b.count),
                   [50, 100, 100]);
});
