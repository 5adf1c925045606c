// Unit tests of the overview's readiness lines (admin-ui/js/screens/overview_readiness.js),
// run by node's own test runner: the state with its time, and the last failure kept after
// the component recovered.
import assert from 'node:assert/strict';
import test from 'node:test';

import {componentLines} from '../../admin-ui/js/screens/overview_readiness.js';

test('each component says its state since when, what it says now and its last failure', () => {
  const lines = componentLines({
    database: {ready: true, detail: 'open: /var/lib/kimi-appliance/appliance.db', since: '2026-12-01T17:00:00.123Z'},
    model: {ready: true, detail: 'k3: version 2', since: '2026-12-01T17:05:00.000Z',
            last_failure: {reason: 'taken out of service: model-00001.safetensors changed',
                           at: '2026-12-01T17:03:00.000Z'}},
  });
  assert.deepEqual(lines.map((l) => [l.name, l.ready, l.state]),
                   [['database', true, 'ready since 2026-12-01 17:00:00Z'],
                    ['model', true, 'ready since 2026-12-01 17:05:00Z']]);
  assert.equal(lines[0].lastFailure, '');
  assert.equal(lines[1].lastFailure,
               'last failure 2026-12-01 17:03:00Z: taken out of service: model-00001.safetensors changed');
  assert.equal(lines[1].detail, 'k3: version 2');
});

test('an anonymous body (no details) still lists the states', () => {
  assert.deepEqual(componentLines({audit: {ready: false}}),
                   [{name: 'audit', ready: false, state: 'not ready', detail: '', lastFailure: ''}]);
  assert.deepEqual(componentLines(undefined), []);
});
