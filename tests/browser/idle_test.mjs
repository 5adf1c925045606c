// The console's idle sign-out (admin-ui/js/idle.js) on a fake clock.
import assert from 'node:assert/strict';
import {test} from 'node:test';
import {idleText, idleWatch} from '../../admin-ui/js/idle.js';

function fakeClock() {
  let now = 0;
  let next = 1;
  const timers = new Map();
  return {
    now: () => now,
    setTimeout(fn, ms) {
      timers.set(next, {fn, at: now + ms});
      return next++;
    },
    clearTimeout(id) {
      timers.delete(id);
    },
    // Moves the clock by ms, firing each timer that falls due, in order.
    advance(ms) {
      const end = now + ms;
      for (;;) {
        const due = [...timers.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
        if (!due) break;
        timers.delete(due[0]);
        now = due[1].at;
        due[1].fn();
      }
      now = end;
    },
    pending: () => timers.size,
  };
}

test('signs out once the timeout passes without activity', () => {
  const clock = fakeClock();
  let idle = 0;
  idleWatch(1800_000, () => idle++, clock);
  clock.advance(1799_999);
  assert.equal(idle, 0);
  clock.advance(1);
  assert.equal(idle, 1);
  clock.advance(3600_000);
  assert.equal(idle, 1, 'called once');
  assert.equal(clock.pending(), 0);
});

test('each request starts the timeout again', () => {
  const clock = fakeClock();
  let idle = 0;
  const watch = idleWatch(60_000, () => idle++, clock);
  clock.advance(50_000);
  watch.activity();
  clock.advance(50_000);
  assert.equal(idle, 0, 'activity at 50 s moves the end to 110 s');
  clock.advance(10_000);
  assert.equal(idle, 1);
});

test('a timer that fires late still signs out, one that fires early waits', () => {
  const clock = fakeClock();
  let idle = 0;
  const early = {...clock, setTimeout: (fn, ms) => clock.setTimeout(fn, Math.ceil(ms / 2))};
  idleWatch(60_000, () => idle++, early);
  clock.advance(30_000);
  assert.equal(idle, 0, 'fired at half time, rearmed');
  clock.advance(30_000);
  assert.equal(idle, 1);
});

test('stop ends the watch for good', () => {
  const clock = fakeClock();
  let idle = 0;
  const watch = idleWatch(1000, () => idle++, clock);
  watch.stop();
  clock.advance(5000);
  assert.equal(idle, 0);
  assert.equal(clock.pending(), 0);
});

test('the timeout in words', () => {
  assert.equal(idleText(1800_000), '30 minutes');
  assert.equal(idleText(60_000), '1 minute');
  assert.equal(idleText(45_000), '45 seconds');
});
