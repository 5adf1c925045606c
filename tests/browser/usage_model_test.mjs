// Unit tests of the Usage screen's pure part (admin-ui/js/usage_model.js), under node's own
// test runner: stacked series with "others", the chart axis, number wording, budget states.
import assert from 'node:assert/strict';
import test from 'node:test';

import {axis, budgetState, compact, grouped, labelledDays, percent, shortDate, stackMax, stackSeries}
  from '../../admin-ui/js/usage_model.js';

const line = (id, name, prompt, completion, requests) => ({id, name, prompt_tokens: prompt,
                                                          completion_tokens: completion, requests});

test('the biggest lines keep their own series and the rest add up as others', () => {
  const lines = [line('key_a', 'alpha', [10, 20], [1, 2], [1, 2]), line('key_b', 'beta', [5, 0], [0, 0], [1, 0]),
                 line('key_c', '', [1, 1], [1, 1], [1, 1]), line('key_d', 'delta', [0, 3], [0, 0], [0, 1])];
  const series = stackSeries(lines, {top: 2});
  assert.deepEqual(series.map((s) => s.label), ['alpha (key_a)', 'beta (key_b)', '2 others']);
  assert.deepEqual(series[0].values, [11, 22]);
  assert.deepEqual(series[2].values, [2, 5]);
  assert.deepEqual(stackSeries(lines, {top: 2, metric: 'requests'})[2].values, [1, 2]);
  assert.equal(stackSeries(lines.slice(0, 2), {top: 2}).length, 2);  // no empty "others"
  assert.equal(stackMax(series), 27);  // day 2: 22 + 0 + 5
  assert.equal(stackMax([]), 0);
});

test('the axis rounds up to 1, 2 or 5 times a power of ten with about four ticks', () => {
  assert.deepEqual(axis(45), {max: 60, ticks: [0, 20, 40, 60]});
  assert.deepEqual(axis(1000), {max: 1000, ticks: [0, 500, 1000]});
  assert.deepEqual(axis(0), {max: 1, ticks: [0, 1]});
  assert.ok(axis(123456).max >= 123456);
});

test('numbers, shares and dates read as people write them', () => {
  assert.equal(grouped(1234567), '1,234,567');
  assert.equal(grouped(999), '999');
  assert.equal(compact(1500), '1.5k');
  assert.equal(compact(12000), '12k');
  assert.equal(compact(3200000), '3.2M');
  assert.equal(compact(950), '950');
  assert.equal(percent(0.75), '75.0%');
  assert.equal(percent(0.99996), '99.9%');  // never rounds up to a full budget
  assert.equal(shortDate('2026-12-01'), 'Dec 1');
  assert.deepEqual(labelledDays(7, 8), [0, 1, 2, 3, 4, 5, 6]);
  assert.deepEqual(labelledDays(30, 8).slice(-1), [29]);
  assert.ok(labelledDays(90, 8).length <= 8);
});

test('a budget reads as within, alerting or over', () => {
  const budget = {tokens_per_month: 20, alert_percent: 80, used_tokens: 15, alerting: false, exceeded: false};
  assert.deepEqual(budgetState(budget), {text: 'within budget: 15 of 20 (75.0%)', className: 'ok'});
  assert.deepEqual(budgetState({...budget, used_tokens: 17, alerting: true}),
                   {text: 'alert (80%): 17 of 20 (85.0%)', className: 'warn'});
  assert.equal(budgetState({...budget, used_tokens: 30, alerting: true, exceeded: true}).className, 'bad');
  assert.equal(budgetState(null).text, 'no budget');
});
