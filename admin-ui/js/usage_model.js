// What the Usage screen shows, computed from the admin API's answers without the DOM: the
// stacked series of a chart (the biggest lines and the rest as "others"), the axis of a chart
// (a round maximum and its ticks), and the wording of numbers, shares and budget states.

// lines: [{id, name, [metric]: [per day]}] most first (as /admin/v1/usage answers). Returns
// [{label, values}] with at most `top` lines of their own and one "others" line for the rest.
export function stackSeries(lines, {metric = 'tokens', top = 5} = {}) {
  const valuesOf = (line) => metric === 'requests'
      ? line.requests.slice()
      : line.prompt_tokens.map((p, i) => p + line.completion_tokens[i]);
  const out = lines.slice(0, top).map((line) => ({label: line.name ? line.name + ' (' + line.id + ')' : line.id,
                                                  values: valuesOf(line)}));
  const rest = lines.slice(top);
  if (rest.length > 0) {
    const sum = valuesOf(rest[0]);
    for (const line of rest.slice(1)) valuesOf(line).forEach((v, i) => { sum[i] += v; });
    out.push({label: rest.length + ' others', values: sum});
  }
  return out;
}

// The highest stack of any day.
export function stackMax(series) {
  if (series.length === 0) return 0;
  return Math.max(0, ...series[0].values.map((_, i) => series.reduce((s, line) => s + line.values[i], 0)));
}

// A round axis maximum at or above `max` (1, 2 or 5 times a power of ten) and its ticks from 0,
// about four of them.
export function axis(max) {
  if (!(max > 0)) return {max: 1, ticks: [0, 1]};
  const rough = max / 4;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough);
  const top = Math.ceil(max / step) * step;
  const ticks = [];
  for (let t = 0; t <= top + step / 2; t += step) ticks.push(Math.round(t * 1e6) / 1e6);
  return {max: top, ticks};
}

// 1234567 -> "1,234,567".
export function grouped(n) {
  return Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

// Axis labels: 950, 1.5k, 12k, 3.2M.
export function compact(n) {
  const abs = Math.abs(n);
  const fmt = (v, suffix) => (v >= 10 || Number.isInteger(v) ? String(Math.round(v)) : v.toFixed(1)) + suffix;
  if (abs >= 1e9) return fmt(n / 1e9, 'G');
  if (abs >= 1e6) return fmt(n / 1e6, 'M');
  if (abs >= 1e3) return fmt(n / 1e3, 'k');
  return String(Math.round(n * 100) / 100);
}

export function percent(share) {
  return (Math.floor(share * 1000) / 10).toFixed(1) + '%';
}

// A budget's state in words, and a class for its badge: over budget, at its alert threshold,
// or within it. Shares are floored, so 99.96% used never reads as 100%.
export function budgetState(budget) {
  if (!budget) return {text: 'no budget', className: 'none'};
  const used = grouped(budget.used_tokens) + ' of ' + grouped(budget.tokens_per_month) + ' (' +
      percent(budget.used_tokens / budget.tokens_per_month) + ')';
  if (budget.exceeded) return {text: 'over budget: ' + used, className: 'bad'};
  if (budget.alerting) return {text: 'alert (' + budget.alert_percent + '%): ' + used, className: 'warn'};
  return {text: 'within budget: ' + used, className: 'ok'};
}

// "2026-12-01" -> "Dec 1"; the chart's x labels (the range is said to be UTC once, by the axis).
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
export function shortDate(date) {
  const [, m, d] = date.split('-');
  return MONTHS[Number(m) - 1] + ' ' + Number(d);
}

// Which of `count` x positions get a label: about `wanted` of them, always the last (today).
export function labelledDays(count, wanted = 8) {
  const step = Math.max(1, Math.ceil(count / wanted));
  const out = [];
  for (let i = count - 1; i >= 0; i -= step) out.unshift(i);
  return out;
}
