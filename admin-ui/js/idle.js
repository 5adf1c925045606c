// The console's idle sign-out: the daemon ends a session after idle_timeout_s without a
// request (GET /admin/v1/session says how long), so once that long has passed since the
// console's last request it clears the screen and returns to sign-in by itself, without
// waiting for the next click to find the session gone. Pure: the clock and the timer are
// passed in, so a test runs it on a fake clock.

// timeoutMs: the session's idle timeout; onIdle(): called once when it passes without
// activity(); clock: {now(), setTimeout(fn, ms), clearTimeout(id)}. Returns
// {activity(), stop()}.
export function idleWatch(timeoutMs, onIdle, clock) {
  let last = clock.now();
  let timer = null;
  let stopped = false;
  function arm(delay) {
    if (timer !== null) clock.clearTimeout(timer);
    timer = clock.setTimeout(check, Math.max(0, delay));
  }
  // A timer can fire late (a sleeping laptop) or early (a throttled tab): the clock decides.
  function check() {
    timer = null;
    if (stopped) return;
    const left = last + timeoutMs - clock.now();
    if (left > 0) {
      arm(left);
      return;
    }
    stopped = true;
    onIdle();
  }
  arm(timeoutMs);
  return {
    activity() {
      if (!stopped) last = clock.now();
    },
    stop() {
      stopped = true;
      if (timer !== null) clock.clearTimeout(timer);
      timer = null;
    },
  };
}

// "30 minutes", "1 minute", "45 seconds": how the sign-in page names the timeout.
export function idleText(timeoutMs) {
  const s = Math.round(timeoutMs / 1000);
  if (s % 60 !== 0 || s < 60) return s + (s === 1 ? ' second' : ' seconds');
  const m = s / 60;
  return m + (m === 1 ? ' minute' : ' minutes');
}
