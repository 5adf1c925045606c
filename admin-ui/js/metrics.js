// Reading the daemon's /metrics (Prometheus text format) for the overview: a parser, and
// the figures the overview draws, computed from two scrapes a few seconds apart (rates from
// counter differences, latency quantiles from the histogram buckets filled in between).
// Pure functions of their inputs, except the session history kept at the end.

// Parses exposition text into {families: Map(name -> {type, samples: [{name, labels, value}]})}.
export function parsePrometheus(text) {
  const families = new Map();
  const familyOf = (name) => {
    if (!families.has(name)) families.set(name, {type: 'untyped', samples: []});
    return families.get(name);
  };
  const typed = new Map();
  for (const line of text.split('\n')) {
    if (line.startsWith('# TYPE ')) {
      const [name, type] = line.slice(7).trim().split(/\s+/);
      familyOf(name).type = type;
      typed.set(name, type);
      continue;
    }
    if (line === '' || line.startsWith('#')) continue;
    const sample = parseSample(line);
    if (!sample) continue;
    familyOf(baseName(sample.name, typed)).samples.push(sample);
  }
  return families;
}

// The family a sample belongs to: histogram samples carry _bucket, _sum and _count suffixes.
function baseName(name, typed) {
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (name.endsWith(suffix)) {
      const base = name.slice(0, -suffix.length);
      if (typed.get(base) === 'histogram' || typed.get(base) === 'summary') return base;
    }
  }
  return name;
}

function parseSample(line) {
  const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
  if (!match) return null;
  const labels = {};
  const body = match[3] || '';
  const labelPattern = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?/g;
  let m;
  while ((m = labelPattern.exec(body)) !== null) {
    labels[m[1]] = m[2].replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
  }
  const value = match[4] === '+Inf' ? Infinity : match[4] === '-Inf' ? -Infinity : Number(match[4]);
  return {name: match[1], labels, value};
}

// Sum of a family's samples whose labels pass `keep`; null when the family is absent.
export function sum(families, name, keep = () => true) {
  const family = families.get(name);
  if (!family) return null;
  return family.samples.filter((s) => s.name === name && keep(s.labels)).reduce((a, s) => a + s.value, 0);
}

export function value(families, name, labels = {}) {
  return sum(families, name, (l) => Object.entries(labels).every(([k, v]) => l[k] === v));
}

// The first histogram family whose name matches `pattern`, or null.
export function findHistogram(families, pattern) {
  for (const [name, family] of families) {
    if (family.type === 'histogram' && pattern.test(name)) return name;
  }
  return null;
}

// Cumulative bucket counts of a histogram, summed over every label set: [{le, count}] by le.
export function buckets(families, name) {
  const family = families.get(name);
  if (!family) return [];
  const byLe = new Map();
  for (const s of family.samples) {
    if (s.name !== name + '_bucket') continue;
    const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
    byLe.set(le, (byLe.get(le) || 0) + s.value);
  }
  return [...byLe.entries()].sort((a, b) => a[0] - b[0]).map(([le, count]) => ({le, count}));
}

// Buckets of the observations made between two scrapes.
export function bucketDelta(now, before) {
  const old = new Map(before.map((b) => [b.le, b.count]));
  return now.map((b) => ({le: b.le, count: Math.max(0, b.count - (old.get(b.le) || 0))}));
}

// The q-quantile of cumulative buckets, interpolated linearly inside its bucket (as
// Prometheus' histogram_quantile does); null when there are no observations.
export function quantile(q, cumulative) {
  if (cumulative.length === 0) return null;
  const total = cumulative[cumulative.length - 1].count;
  if (!(total > 0)) return null;
  const rank = q * total;
  let prevLe = 0;
  let prevCount = 0;
  for (const {le, count} of cumulative) {
    if (count >= rank) {
      if (le === Infinity) return prevLe;
      const inBucket = count - prevCount;
      return inBucket > 0 ? prevLe + (le - prevLe) * ((rank - prevCount) / inBucket) : le;
    }
    prevLe = le;
    prevCount = count;
  }
  return prevLe;
}

// Routes that are not work done for clients: probes, the console's files and its own
// polling of the admin API and the model list.
const NOT_CLIENT_WORK = /^(metrics|readyz|healthz|models|model|unmatched|console_.*|admin_.*)$/;

// Time to first token and inter-token latency histograms, whatever exact name the serving
// path gives them.
const TTFT = /(time_to_first_token|ttft)/;
const ITL = /(inter_token|itl|time_per_output_token)/;

// The overview's figures from two scrapes `dt` seconds apart (`before` may be null).
export function figures(now, before, dt) {
  const rate = (a, b) => (a === null || b === null || !(dt > 0) ? null : Math.max(0, a - b) / dt);
  const requests = (f) => sum(f, 'kimi_http_requests_total', (l) => !NOT_CLIENT_WORK.test(l.route || ''));
  const tokens = (f) => value(f, 'kimi_engine_tokens', {kind: 'generated'});
  const out = {
    requestRate: before ? rate(requests(now), requests(before)) : null,
    tokenRate: before ? rate(tokens(now), tokens(before)) : null,
    queued: value(now, 'kimi_engine_requests', {state: 'waiting'}),
    running: value(now, 'kimi_engine_requests', {state: 'running'}),
    memoryUsed: value(now, 'kimi_engine_memory_bytes', {kind: 'used'}),
    memoryBudget: value(now, 'kimi_engine_memory_bytes', {kind: 'budget'}),
    prefixCacheBytes: value(now, 'kimi_engine_prefix_cache', {kind: 'bytes'}),
  };
  for (const [key, pattern] of [['ttft', TTFT], ['itl', ITL]]) {
    const name = findHistogram(now, pattern);
    out[key + 'Reported'] = name !== null;
    const window = name && before ? bucketDelta(buckets(now, name), buckets(before, name)) : [];
    out[key + 'P50'] = quantile(0.5, window);
    out[key + 'P99'] = quantile(0.99, window);
  }
  return out;
}

// The figures of this browser session, oldest first: about an hour at one scrape every
// few seconds. Kept here, not in a screen, so that leaving the overview keeps them.
export const MAX_POINTS = 1200;
export const history = [];

export function remember(point) {
  history.push(point);
  if (history.length > MAX_POINTS) history.splice(0, history.length - MAX_POINTS);
}
