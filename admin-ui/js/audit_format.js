// The audit screen's pure formatting (no DOM): the time inputs read as UTC, a record's detail
// as one line for the table and in full for the record view, latencies and token counts.

// A datetime-local value ("2026-12-01T09:30" or with seconds) read as UTC, as the API takes
// it ("2026-12-01T09:30:00Z"); '' for an empty input. The browser offers no zone on the
// input, so the screen labels it UTC and never converts from the local zone.
export function utcParam(value) {
  if (!value) return '';
  return (value.length === 16 ? value + ':00' : value) + 'Z';
}

// The record's detail as one line of at most `max` characters: JSON is shown compact with its
// top-level keys first ("version: 3, previous: 2, name: default, diff: [7 changes]"), other
// text up to its first line break.
export function detailLine(detail, max = 120) {
  if (!detail) return '';
  const parsed = parseJson(detail);
  let line;
  if (parsed !== undefined && parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
    line = Object.entries(parsed).map(([k, v]) => k + ': ' + summary(v)).join(', ');
  } else if (Array.isArray(parsed)) {
    line = summary(parsed);
  } else {
    line = detail.split(/\r?\n|\\n/)[0];
  }
  return line.length > max ? line.slice(0, max - 1) + '…' : line;
}

// The detail in full for reading: JSON indented by two spaces, other text as it is.
export function detailFull(detail) {
  if (!detail) return '';
  const parsed = parseJson(detail);
  return parsed !== undefined && parsed !== null && typeof parsed === 'object' ? JSON.stringify(parsed, null, 2) : detail;
}

function parseJson(text) {
  const first = text.trimStart()[0];
  if (first !== '{' && first !== '[') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function summary(value) {
  if (Array.isArray(value)) return '[' + value.length + (value.length === 1 ? ' item]' : ' items]');
  if (value !== null && typeof value === 'object') return '{' + Object.keys(value).length + ' fields}';
  return String(value);
}

// Microseconds as milliseconds for a table cell: "0.8 ms", "12 ms", "1,234 ms"; '' for none.
export function latencyMs(us) {
  if (!us || us <= 0) return '';
  const ms = us / 1000;
  return (ms < 10 ? ms.toFixed(1) : Math.round(ms).toLocaleString('en-US')) + ' ms';
}

// Prompt and completion tokens as "in / out"; '' when the record counts none.
export function tokens(record) {
  const p = record.prompt_tokens || 0;
  const c = record.completion_tokens || 0;
  return p || c ? p.toLocaleString('en-US') + ' / ' + c.toLocaleString('en-US') : '';
}
