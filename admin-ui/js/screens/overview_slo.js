// The overview's service-level panel: attainment per time-to-first-token tier and per
// inter-token-latency class, read from the appliance's kimi_slo_* series on /metrics
// (docs/policies.md "Service levels"), and an alert banner while a target was missed in the
// recent window (the last WINDOW_MS of this session's scrapes).
// The reading (sloCounts, sloAttainment, rememberSlo) is pure apart from the window kept
// here, so leaving the overview keeps it; node's test runner covers it (tests/browser).

import {h} from '../dom.js';

export const WINDOW_MS = 5 * 60 * 1000;

// Scrapes of this session within the window, oldest first: {at, counts}.
const windowScrapes = [];

// One row per tier and per class from one scrape: {ttft: [{key, target, requests, met}],
// itl: [...]}, tiers by size, classes by name; null when the appliance reports no series.
export function sloCounts(families) {
  const read = (prefix, label, unitsName) => {
    const targets = families.get('kimi_slo_' + prefix + '_target_seconds');
    if (!targets) return [];
    const count = (name, key) => {
      const family = families.get(name);
      const sample = family ? family.samples.find((s) => s.labels[label] === key) : null;
      return sample ? sample.value : 0;
    };
    return targets.samples.map((s) => ({
      key: s.labels[label],
      target: s.value,
      requests: count('kimi_slo_' + prefix + '_' + unitsName + '_total', s.labels[label]),
      met: count('kimi_slo_' + prefix + '_met_total', s.labels[label]),
    }));
  };
  if (!families.has('kimi_slo_ttft_target_seconds') && !families.has('kimi_slo_itl_target_seconds')) return null;
  const tierSize = (key) => Number(String(key).replace(/^le_/, ''));
  return {
    ttft: read('ttft', 'tier', 'requests').sort((a, b) => tierSize(a.key) - tierSize(b.key)),
    itl: read('itl', 'class', 'gaps').sort((a, b) => a.key.localeCompare(b.key)),
  };
}

// Attainment since start and within the window: each row gains {recentRequests,
// recentMet, missedRecently}; `baseline` is the window's oldest counts (null: none yet, so
// nothing is judged recent).
export function sloAttainment(counts, baseline) {
  const withRecent = (rows, oldRows) => rows.map((row) => {
    const old = oldRows ? oldRows.find((o) => o.key === row.key) : null;
    // A counter that went down means the appliance restarted: its whole count is recent.
    const restarted = old && (row.requests < old.requests || row.met < old.met);
    const recentRequests = !oldRows ? 0 : Math.max(0, row.requests - (old && !restarted ? old.requests : 0));
    const recentMet = !oldRows ? 0 : Math.max(0, row.met - (old && !restarted ? old.met : 0));
    return {...row, recentRequests, recentMet, missedRecently: recentMet < recentRequests};
  });
  return {
    ttft: withRecent(counts.ttft, baseline ? baseline.ttft : null),
    itl: withRecent(counts.itl, baseline ? baseline.itl : null),
  };
}

// Adds a scrape's counts to the window and returns the window's oldest counts before it.
export function rememberSlo(counts, at, windowMs = WINDOW_MS) {
  while (windowScrapes.length && at - windowScrapes[0].at > windowMs) windowScrapes.shift();
  const baseline = windowScrapes.length ? windowScrapes[0].counts : null;
  windowScrapes.push({at, counts});
  return baseline;
}

// A share of `total` as a percentage that never rounds to 100% or 0% unless it is exactly
// that: one decimal, more where one rounds to a bound, and "> 99.99%" / "< 0.01%" past that.
export function formatShare(part, total) {
  if (!(total > 0)) return '–';
  if (part >= total) return '100%';
  if (part <= 0) return '0%';
  const share = 100 * part / total;
  for (const digits of [1, 2]) {
    const text = share.toFixed(digits);
    if (Number(text) < 100 && Number(text) > 0) return text + '%';
  }
  return share > 50 ? '> 99.99%' : '< 0.01%';
}

// The "Within target" cell: the share met, and the misses whenever there are any.
export function attainmentText(met, total) {
  const share = formatShare(met, total);
  const missed = total - met;
  return missed > 0 ? share + ' (' + missed.toLocaleString('en') + ' missed)' : share;
}
const millis = (seconds) => (seconds * 1000 >= 1000 ? (seconds).toFixed(1) + ' s'
                                                       : Math.round(seconds * 1000) + ' ms');
const tierName = (key) => '≤ ' + Number(String(key).replace(/^le_/, '')).toLocaleString('en') + ' tokens';

function attainmentTable(caption, unit, rows, name) {
  return h('table', {class: 'slo'},
           h('caption', {}, caption),
           h('thead', {}, h('tr', {}, ['', 'Target', unit + ' since start', 'Within target', 'Last 5 min']
               .map((c) => h('th', {scope: 'col'}, c)))),
           h('tbody', {}, rows.map((r) => h('tr', {class: r.missedRecently ? 'bad' : null, 'data-key': r.key},
               h('th', {scope: 'row'}, name(r.key)), h('td', {}, millis(r.target)),
               h('td', {}, r.requests.toLocaleString('en')),
               h('td', {}, attainmentText(r.met, r.requests)),
               h('td', {}, r.recentRequests ? r.recentMet + ' of ' + r.recentRequests : '–')))));
}

// The alert banner's lines: one per tier or class that missed its target in the window.
export function sloAlerts(attainment) {
  const lines = [];
  for (const r of attainment.ttft) {
    if (r.missedRecently) {
      lines.push('Time to first token, prompts ' + tierName(r.key) + ': ' + (r.recentRequests - r.recentMet) + ' of ' +
                 r.recentRequests + ' requests over the ' + millis(r.target) + ' target');
    }
  }
  for (const r of attainment.itl) {
    if (r.missedRecently) {
      lines.push('Inter-token latency, ' + r.key + ': ' + (r.recentRequests - r.recentMet) + ' of ' +
                 r.recentRequests + ' gaps over the ' + millis(r.target) + ' target');
    }
  }
  return lines;
}

// The panel for one scrape; `families` as metrics.js parses them, `at` in milliseconds.
export function sloPanel(families, at) {
  const counts = sloCounts(families);
  if (!counts) return null;
  const attainment = sloAttainment(counts, rememberSlo(counts, at));
  const alerts = sloAlerts(attainment);
  return h('section', {class: 'card', id: 'slo', 'aria-labelledby': 'slo-title'},
           h('h2', {id: 'slo-title'}, 'Service levels'),
           alerts.length ? h('div', {class: 'slo-alert', id: 'slo-alert', role: 'alert'},
                             h('strong', {}, 'Service level missed in the last 5 minutes'),
                             h('ul', {}, alerts.map((line) => h('li', {}, line)))) : null,
           h('div', {class: 'columns'},
             attainmentTable('Time to first token, by prompt length', 'Requests', attainment.ttft, tierName),
             attainmentTable('Inter-token latency, by workload class', 'Gaps', attainment.itl, (key) => key)));
}
