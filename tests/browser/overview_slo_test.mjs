// Unit tests of the overview's service-level reading (admin-ui/js/screens/overview_slo.js),
// run by node's own test runner: counts per tier and class from the kimi_slo_* series, the
// recent window against a baseline scrape, and the alert lines.
import assert from 'node:assert/strict';
import test from 'node:test';

import {parsePrometheus} from '../../admin-ui/js/metrics.js';
import {attainmentText, formatShare, rememberSlo, sloAlerts, sloAttainment, sloCounts} from '../../admin-ui/js/screens/overview_slo.js';

function scrape(ttft4096, met4096, gaps, metGaps) {
  return parsePrometheus(`# TYPE kimi_slo_ttft_target_seconds gauge
kimi_slo_ttft_target_seconds{tier="le_32768"} 2
kimi_slo_ttft_target_seconds{tier="le_4096"} 0.5
# TYPE kimi_slo_ttft_requests_total counter
kimi_slo_ttft_requests_total{tier="le_4096"} ${ttft4096}
kimi_slo_ttft_requests_total{tier="le_32768"} 3
# TYPE kimi_slo_ttft_met_total counter
kimi_slo_ttft_met_total{tier="le_4096"} ${met4096}
kimi_slo_ttft_met_total{tier="le_32768"} 3
# TYPE kimi_slo_itl_target_seconds gauge
kimi_slo_itl_target_seconds{class="chat"} 0.05
kimi_slo_itl_target_seconds{class="agentic"} 0.1
# TYPE kimi_slo_itl_gaps_total counter
kimi_slo_itl_gaps_total{class="chat"} ${gaps}
kimi_slo_itl_gaps_total{class="agentic"} 0
# TYPE kimi_slo_itl_met_total counter
kimi_slo_itl_met_total{class="chat"} ${metGaps}
kimi_slo_itl_met_total{class="agentic"} 0
`);
}

test('counts per tier (by size) and per class come from the kimi_slo series', () => {
  const counts = sloCounts(scrape(10, 9, 100, 100));
  assert.deepEqual(counts.ttft.map((r) => [r.key, r.target, r.requests, r.met]),
                   [['le_4096', 0.5, 10, 9], ['le_32768', 2, 3, 3]]);
  assert.deepEqual(counts.itl.map((r) => [r.key, r.target, r.requests, r.met]),
                   [['agentic', 0.1, 0, 0], ['chat', 0.05, 100, 100]]);
  assert.equal(sloCounts(parsePrometheus('# TYPE x gauge\nx 1\n')), null);
});

test('only misses since the window\'s first scrape raise the alert', () => {
  const before = sloCounts(scrape(10, 9, 100, 100));  // one old miss in le_4096
  const quiet = sloAttainment(sloCounts(scrape(12, 11, 150, 150)), before);
  assert.deepEqual(sloAlerts(quiet), []);
  const missed = sloAttainment(sloCounts(scrape(13, 11, 160, 155)), before);
  assert.deepEqual(sloAlerts(missed), [
    'Time to first token, prompts ≤ 4,096 tokens: 1 of 3 requests over the 500 ms target',
    'Inter-token latency, chat: 5 of 60 gaps over the 50 ms target',
  ]);
  // Without a baseline nothing is judged recent; after a restart the counts start over.
  assert.deepEqual(sloAlerts(sloAttainment(sloCounts(scrape(13, 11, 160, 155)), null)), []);
  const restarted = sloAttainment(sloCounts(scrape(1, 0, 0, 0)), before);
  assert.equal(restarted.ttft[0].missedRecently, true);
});

test('the window keeps scrapes of the last minutes and answers its oldest', () => {
  const a = sloCounts(scrape(1, 1, 0, 0));
  const b = sloCounts(scrape(2, 2, 0, 0));
  assert.equal(rememberSlo(a, 0, 1000), null);
  assert.equal(rememberSlo(b, 500, 1000), a);
  assert.equal(rememberSlo(b, 1400, 1000), b, 'the scrape at 0 left the window');
});

test('a share is never shown as 100% or 0% unless it is exactly that', () => {
  // 6 misses in 23,121 gaps: 99.974...%, which one decimal would round to "100.0%".
  assert.equal(formatShare(23115, 23121), '99.97%');
  assert.equal(attainmentText(23115, 23121), '99.97% (6 missed)');
  assert.equal(formatShare(999999, 1000000), '> 99.99%');
  assert.equal(formatShare(1, 1000000), '< 0.01%');
  assert.equal(formatShare(1, 30000), '< 0.01%');
  assert.equal(formatShare(2, 3), '66.7%');
  assert.equal(formatShare(5, 5), '100%');
  assert.equal(attainmentText(5, 5), '100%');
  assert.equal(formatShare(0, 5), '0%');
  assert.equal(formatShare(0, 0), '–');
});
