// Unit tests of the audit screen's formatting (admin-ui/js/audit_format.js), run by node's own
// test runner: UTC time inputs, the one-line and the full detail, latencies and tokens.
import assert from 'node:assert/strict';
import test from 'node:test';

import {detailFull, detailLine, latencyMs, tokens, utcParam} from '../../admin-ui/js/audit_format.js';

// A policy change's detail as policy_service.cc writes it: a JSON diff that printed raw made
// one table row twenty lines tall.
const POLICY_DETAIL = JSON.stringify({version: 3, previous: 2, name: 'default',
                                      diff: [{op: 'replace', path: '/content_logging/retention_days', value: 7},
                                             {op: 'replace', path: '/name', value: 'default'}]});

test('the time inputs are read as UTC, not local time', () => {
  assert.equal(utcParam('2026-12-01T09:30'), '2026-12-01T09:30:00Z');
  assert.equal(utcParam('2026-12-01T09:30:15'), '2026-12-01T09:30:15Z');
  assert.equal(utcParam(''), '');
});

test('a JSON detail is one short line in the table', () => {
  const line = detailLine(POLICY_DETAIL);
  assert.equal(line, 'version: 3, previous: 2, name: default, diff: [2 items]');
  assert.ok(!line.includes('\n'));
  assert.equal(detailLine('{"a":' + JSON.stringify('x'.repeat(500)) + '}').length, 120);
  assert.ok(detailLine('{"a":' + JSON.stringify('x'.repeat(500)) + '}').endsWith('…'));
  assert.equal(detailLine('refused: bad key\\nsecond line'), 'refused: bad key');
  assert.equal(detailLine('{not json'), '{not json');
  assert.equal(detailLine(''), '');
});

test('the full detail is indented JSON, or the text as it is', () => {
  const full = detailFull(POLICY_DETAIL);
  assert.deepEqual(JSON.parse(full), JSON.parse(POLICY_DETAIL));
  assert.ok(full.includes('\n  "diff": [\n'));
  assert.equal(detailFull('plain words'), 'plain words');
});

test('latencies read in milliseconds and tokens as in / out', () => {
  assert.equal(latencyMs(870), '0.9 ms');
  assert.equal(latencyMs(12_400), '12 ms');
  assert.equal(latencyMs(1_234_000), '1,234 ms');
  assert.equal(latencyMs(0), '');
  assert.equal(tokens({prompt_tokens: 1200, completion_tokens: 34}), '1,200 / 34');
  assert.equal(tokens({prompt_tokens: 0, completion_tokens: 0}), '');
});
